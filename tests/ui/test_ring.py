"""The ring stays within its count and its byte cap, whatever the traffic."""

from __future__ import annotations

import base64
import gc
import random
import time
import tracemalloc
import zlib

import orjson

from proxy.ui.ring import ENTRY_OVERHEAD, Entry, Ring, encode_capture


def entry(ring: Ring, body_bytes: int = 0, repairs: tuple[str, ...] = ("TP001",), text: str = "") -> Entry:
    # Random-looking text: compression must not be what keeps the ring small in these tests.
    content = base64.b64encode(random.Random(text).randbytes(body_bytes)).decode()[:body_bytes]
    record = {"request_id": "r", "original": {"messages": [{"role": "user", "content": content}]}}
    return Entry(
        seq=ring.next_seq(),
        request_id=f"req-{ring._seq}",
        timestamp=time.time(),
        method="POST",
        path="/v1/chat/completions",
        route="openai",
        model="gpt-4o",
        upstream="http://127.0.0.1:1/v1",
        status=200,
        upstream_status="200",
        duration_ms=1.0,
        repairs=repairs,
        outcome="complete",
        capture=encode_capture(record) if body_bytes else None,
    )


def test_count_and_bytes_stay_under_their_caps_through_20000_requests() -> None:
    cap = 2 * 1024 * 1024
    ring = Ring(max_entries=10_000, max_bytes=cap)
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        highest = 0
        for i in range(20_000):
            ring.add(entry(ring, body_bytes=(i % 7) * 3000, text=str(i)))
            assert ring.bytes <= cap
            assert len(ring.entries) <= 10_000
            if i % 1000 == 999:
                highest = max(highest, tracemalloc.get_traced_memory()[0] - baseline)
    finally:
        tracemalloc.stop()
    # What the ring accounts for is what it holds: measured memory stays within the cap, plus a margin
    # for the deque and the per-minute counts.
    assert highest < cap * 1.25, highest
    assert ring.entries[-1].request_id == "req-20000"
    assert sum(e.size for e in ring.entries) == ring.bytes


def test_count_cap_drops_the_oldest() -> None:
    ring = Ring(max_entries=3, max_bytes=10 * 1024 * 1024)
    for _ in range(5):
        ring.add(entry(ring))
    assert [e.request_id for e in ring.entries] == ["req-3", "req-4", "req-5"]
    assert ring.bytes == 3 * ENTRY_OVERHEAD


def test_a_body_too_big_for_the_cap_keeps_its_metadata_only() -> None:
    ring = Ring(max_entries=100, max_bytes=64 * 1024)
    ring.add(entry(ring, body_bytes=100_000))
    [kept] = ring.entries
    assert kept.capture is None and kept.repairs == ("TP001",)


def test_keep_bodies_false_keeps_metadata_only() -> None:
    ring = Ring(max_entries=100, max_bytes=1024 * 1024, keep_bodies=False)
    ring.add(entry(ring, body_bytes=100))
    assert ring.entries[0].capture is None


def test_counts_per_minute_for_the_last_hour() -> None:
    ring = Ring(max_entries=100, max_bytes=1024 * 1024)
    ring.add(entry(ring, repairs=("TP001", "TP002")))
    ring.add(entry(ring, repairs=("TP001",)))
    series = ring.counts.series()
    assert sum(series["repair", "TP001"]) == 2 and series["repair", "TP001"][-1] == 2
    assert sum(series["repair", "TP002"]) == 1


def test_a_capture_nested_deeper_than_orjson_writes_is_kept() -> None:
    # orjson reads 1,024 levels and writes 254: the page must still hold such a request's capture.
    deep = orjson.loads("[" * 1000 + "1" + "]" * 1000)
    record = {"request_id": "r", "original": {"messages": [{"role": "user", "content": "hi", "extra": deep}]}}
    encoded = encode_capture(record)
    assert encoded is not None
    assert orjson.loads(zlib.decompress(encoded)) == record
