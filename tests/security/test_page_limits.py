"""The page's bounds, each through a real Suture on a loopback port: the login reads no more than a
form, the ring counts what it holds, and a long transcript's page and capture are built off the
event loop (issue: the page's memory and event-loop limits)."""

from __future__ import annotations

import contextlib
import select
import socket
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import orjson
import pytest

import proxy.ui.feed
import proxy.ui.page
from proxy.app import build_app
from proxy.settings import Settings
from proxy.ui.ring import Entry, Ring
from tests._support.proxy_e2e import EchoUpstream, wait_for
from tests._support.servers import running_server

KEY = "page-limits-key-0123456789"
MiB = 1024 * 1024
ORPHAN = "call_orphan_1"
# An agent stopped mid-tool: TP001 answers the orphan call, so the request is repaired and captured.
BROKEN_TAIL: list[dict[str, Any]] = [
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": ORPHAN, "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
    },
    {"role": "user", "content": "stop"},
]
# The longest a Gate holds its work: held on the event loop, the hold is the whole server's.
GATE_SECONDS = 5.0


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with running_server(EchoUpstream().app()) as url:
        yield url + "/v1"


@contextlib.contextmanager
def serving(**settings: Any) -> Iterator[tuple[str, Ring]]:
    """A Suture with the page on; yields its URL and the page's ring."""
    app = build_app(Settings(**settings))
    feed = next(o for o in app.state.suture.observers if isinstance(o, proxy.ui.feed.Feed))
    with running_server(app, timeout_graceful_shutdown=2) as url:
        yield url, feed.ring


def long_chat(messages: int) -> dict[str, Any]:
    """A broken transcript of ``messages`` turns and some 1.1 KB each (several MB in all)."""
    turns = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "lorem ipsum dolor " * 60}
        for i in range(messages)
    ]
    return {"model": "gpt-4o", "messages": [*turns, *BROKEN_TAIL]}


class Gate:
    """Wraps a module's function: notes the thread it ran on, and holds it until ``opened`` (or
    ``GATE_SECONDS``). Held on the event loop, nothing else is served meanwhile, so a probe sent
    while it is held is answered only once the hold times out: the order of the two is the test.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.real: Callable[..., Any] = getattr(module, name)
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.done = threading.Event()
        self.threads: list[str] = []
        self.order: list[str] = []
        monkeypatch.setattr(module, name, self.held)

    def held(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        self.entered.set()
        self.opened.wait(GATE_SECONDS)
        try:
            return self.real(*args, **kwargs)
        finally:
            self.order.append("work done")
            self.done.set()

    def probe(self, url: str) -> None:
        """Once the work began, a probe: answered while the work is held, or after it, not both."""
        assert self.entered.wait(30)
        assert httpx.get(url + "/healthz", timeout=30).status_code == 200
        self.order.append("healthz")


# 1. The login reads a form, not whatever a client sends.


class _Answered(Exception):
    pass


def _send_until_answered(port: int, head: bytes, body: Iterator[bytes]) -> tuple[bytes, int]:
    """Send ``head`` then ``body``, stopping once an answer can be read (or the server closed); the
    answer and the body bytes sent (the answer is empty if the whole body went without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        sock.setblocking(False)
        sent = 0
        try:
            for piece in body:
                view = memoryview(piece)
                while view:
                    readable, writable, _ = select.select([sock], [sock], [], 10)
                    assert readable or writable, "the server neither read nor answered for 10 s"
                    if readable:
                        raise _Answered
                    with contextlib.suppress(BlockingIOError):
                        n = sock.send(view)
                        view = view[n:]
                        sent += n
            return b"", sent
        except (_Answered, ConnectionError):  # or the server closed as the client still sent
            pass
        sock.settimeout(10)
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
        return answer, sent


@pytest.mark.parametrize("framing", ["declared-1-GiB", "chunked-64-MiB"])
def test_a_huge_login_body_is_answered_413_before_it_is_sent_and_not_kept(framing: str) -> None:
    total = 64 * MiB
    piece = b"key=" + b"a" * (64 * 1024 - 4)
    if framing == "declared-1-GiB":
        framed = b"content-length: %d\r\n" % (1024 * MiB)
        pieces: Iterator[bytes] = iter([piece] * (total // len(piece)))
    else:
        framed = b"transfer-encoding: chunked\r\n"
        chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
        pieces = iter([chunk] * (total // len(chunk)))
    head = (
        b"POST /suture/login HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        b"content-type: application/x-www-form-urlencoded\r\n" + framed + b"\r\n"
    )
    with serving(ui={"enabled": True, "api_key": KEY}) as (url, _):
        port = int(url.rsplit(":", 1)[1])
        tracemalloc.start()
        try:
            answer, sent = _send_until_answered(port, head, pieces)
            # The whole process, client included (which sends one piece over and over).
            held = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert answer.startswith(b"HTTP/1.1 413 "), (answer[:200], sent)
        assert b"connection: close" in answer.lower()
        assert sent < total
        assert held < 8 * MiB, held
        # The page is still there, and its login still works.
        with httpx.Client(base_url=url) as browser:
            assert browser.get("/healthz").status_code == 200
            assert browser.post("/suture/login", data={"key": KEY}).status_code == 303


# 2. The ring's byte count is what it holds: strings included, and strings cut.


def _held(entry: Entry) -> int:
    return sum(
        sys.getsizeof(getattr(entry, name))
        for name in ("request_id", "method", "path", "route", "model", "upstream", "upstream_status", "outcome")
    )


def test_a_multi_mib_model_name_is_cut_and_counted_within_the_cap(upstream: str) -> None:
    cap = 64 * 1024
    model = "m" * (4 * MiB)
    with serving(openai={"upstream": upstream}, ui={"enabled": True, "max_bytes": cap}) as (url, ring):
        with httpx.Client(base_url=url, timeout=30) as client:
            for _ in range(5):
                chat = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
                assert client.post("/v1/chat/completions", json=chat).status_code == 200
            client.get("/v1/" + "p" * 60_000)  # a path of 60 KB (the head's bound is 64 KiB)
            assert wait_for(lambda: len(ring.entries) == 6)
            listing = client.get("/suture/")
        assert listing.status_code == 200
        entries = list(ring.entries)
        assert [len(e.model) for e in entries[:5]] == [128] * 5
        assert entries[0].model.endswith("…")
        assert len(entries[5].path) == 256
        assert ring.bytes == sum(e.size for e in entries) <= cap
        # What the entries' strings take is within what the ring counts.
        assert sum(_held(e) for e in entries) <= ring.bytes
        assert len(listing.content) < 256 * 1024, len(listing.content)


# 3. A long transcript's page, and each capture's encoding, off the event loop.


def test_a_long_transcript_s_page_is_built_off_the_loop_and_cut(upstream: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body = long_chat(6000)
    assert len(orjson.dumps(body)) > 6_000_000
    with (
        serving(openai={"upstream": upstream}, ui={"enabled": True}) as (url, _),
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        answer = client.post("/v1/chat/completions", json=body)
        assert answer.status_code == 200 and answer.headers["x-suture-repairs"] != "0"
        request_id = answer.headers["x-suture-request-id"]
        gate = Gate(monkeypatch, proxy.ui.page, "compare")
        page: list[httpx.Response] = []

        def view() -> None:
            with httpx.stream("GET", f"{url}/suture/requests/{request_id}", timeout=60) as response:
                gate.order.append("page began")
                response.read()
                page.append(response)

        viewer = threading.Thread(target=view)
        viewer.start()
        gate.probe(url)
        gate.opened.set()
        viewer.join(60)
        assert gate.order == ["healthz", "work done", "page began"]
        assert not gate.threads[0].startswith("uvicorn-")  # the server's loop runs on that thread
        [detail] = page
        assert detail.status_code == 200
        assert 'id="cut"' in detail.text
        assert f'href="/suture/requests/{request_id}/capture.json"' in detail.text
        assert len(detail.content) < 4 * MiB, len(detail.content)
        # The download stays whole.
        capture = orjson.loads(client.get(f"/suture/requests/{request_id}/capture.json").content)
        assert capture["original"]["messages"] == body["messages"]


def test_a_capture_is_encoded_off_the_loop_and_entries_stay_in_order(
    upstream: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = Gate(monkeypatch, proxy.ui.feed, "encode_capture")
    with (
        serving(openai={"upstream": upstream}, ui={"enabled": True}) as (url, ring),
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        repaired = client.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": BROKEN_TAIL})
        assert repaired.headers["x-suture-repairs"] == "1"
        gate.probe(url)
        assert gate.order == ["healthz"]  # answered while the capture was held
        # A request with nothing to capture, finished while the capture is encoded: listed at once,
        # and numbered before the capture's entry, added once encoded.
        clean = client.post("/v1/chat/completions", json={"model": "gpt-4o", "messages": BROKEN_TAIL[:1]})
        assert wait_for(lambda: len(ring.entries) == 1)
        gate.opened.set()
        assert gate.done.wait(30)
        listing = client.get("/suture/").text
        assert gate.order == ["healthz", "work done"]
        assert not gate.threads[0].startswith("uvicorn-")
        assert [e.request_id for e in ring.entries] == [
            clean.headers["x-suture-request-id"],
            repaired.headers["x-suture-request-id"],
        ]
        assert [e.seq for e in ring.entries] == [1, 2]
        assert ring.entries[1].capture is not None and not ring.pending
        assert repaired.headers["x-suture-request-id"] in listing and clean.headers["x-suture-request-id"] in listing
