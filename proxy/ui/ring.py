"""The last requests, in memory, for the page: bounded by count and by bytes.

:class:`Ring` is fed by the page's observer of finished exchanges (only when the page is on) and read by the page's
routes. It keeps metadata for every request and, for those repaired, rejected or refused (the
requests a capture would keep), the capture's JSON, within its byte cap. It never holds a
header or a key: what it keeps is what a capture file holds. Counts per minute for the last
hour feed the page's chart.
"""

from __future__ import annotations

import asyncio
import calendar
import collections
import contextlib
import sys
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import json_bytes

# What an entry costs besides its capture: its strings, the object, the deque's slot (measured
# with tracemalloc at about 900 bytes for a typical entry; rounded up).
ENTRY_OVERHEAD = 1024
# The bytes of strings (sys.getsizeof, headers included) ENTRY_OVERHEAD allows for: a typical
# entry's come to about 480. Strings longer in all are counted on top, byte for byte.
STRING_BYTES = 512
_STRINGS = ("request_id", "method", "path", "route", "model", "upstream", "upstream_status", "outcome")
# Where the page cuts what a client named (with an ellipsis): a 4 MiB model name sent 30 times
# held 128 MiB under a 64 KiB cap, and the list rendered all of it.
MODEL_CHARS = 128
PATH_CHARS = 256
NAME_CHARS = 128
"""An upstream's, a route's, a request id's."""
# Minutes of counts the chart shows.
MINUTES = 60
# New rows waiting for a slow page; past this, that page misses rows until it reconnects.
QUEUE_SIZE = 256
_OUTCOMES = {"client_disconnected": "client disconnected", "client_stalled": "client stopped reading"}


@dataclass(frozen=True, slots=True)
class Entry:
    """One finished request, as the page lists it."""

    seq: int
    request_id: str
    timestamp: float
    method: str
    path: str
    route: str
    model: str
    upstream: str
    status: int
    upstream_status: str
    duration_ms: float
    repairs: tuple[str, ...]
    outcome: str
    """complete, client disconnected, rejected (by the provider), strict (refused by Suture)..."""
    capture: bytes | None = field(default=None, repr=False)
    """The capture JSON (as ``suture captures`` writes it), zlib-compressed, when kept."""

    @property
    def rejected(self) -> bool:
        return self.outcome in ("rejected", "strict")

    @property
    def size(self) -> int:
        """The bytes the ring counts for this entry: what it holds, strings and capture included."""
        strings = sum(sys.getsizeof(getattr(self, name)) for name in _STRINGS)
        capture = len(self.capture) if self.capture is not None else 0
        return ENTRY_OVERHEAD + max(0, strings - STRING_BYTES) + capture

    def row(self) -> dict[str, Any]:
        """The entry as the list shows it (templates and server-sent events alike)."""
        return {
            "seq": self.seq,
            "id": self.request_id,
            "time": time.strftime("%H:%M:%S", time.gmtime(self.timestamp)),
            "timestamp": iso(self.timestamp),
            "method": self.method,
            "path": self.path,
            "route": self.route,
            "model": self.model,
            "upstream": self.upstream,
            "status": self.status,
            "upstream_status": self.upstream_status,
            "duration_ms": self.duration_ms,
            "repairs": list(self.repairs),
            "outcome": self.outcome,
            "rejected": self.rejected,
            "has_capture": self.capture is not None,
        }

    def capture_json(self) -> bytes | None:
        """The capture file's bytes."""
        return None if self.capture is None else zlib.decompress(self.capture)

    def record(self) -> dict[str, Any] | None:
        """The capture, parsed."""
        data = self.capture_json()
        if data is None:
            return None
        record: dict[str, Any] = orjson.loads(data)
        return record


def shorten(text: str, limit: int) -> str:
    """``text``, cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


# The formats a provider section serves more than one of: the list names which (Chat or Responses).
_API_NAMES = {"openai-chat": "chat", "openai-responses": "responses"}


def route_name(provider: str, api: object) -> str:
    """The list's route column: the provider's section, and which of its formats when it has two
    (``openai chat``, ``openai responses``); the same for a live request and a capture file."""
    name = _API_NAMES.get(api) if isinstance(api, str) else None
    return f"{provider} {name}" if name and provider else provider


def outcome_of(rejection: str | None, upstream_status: int | str | None, outcome: str) -> str:
    """How a request ended, in the list's words."""
    if rejection is not None:
        return "strict"
    if isinstance(upstream_status, int) and upstream_status >= 400:
        return "rejected"
    if isinstance(upstream_status, str):
        return f"upstream {upstream_status}"
    return _OUTCOMES.get(outcome, outcome)


def encode_capture(record: Mapping[str, Any]) -> bytes | None:
    """A capture as the file ``suture captures`` writes holds it, compressed; None if it cannot be encoded.

    Transcripts repeat themselves (each turn resends the whole history's style): compressed, the
    same cap holds several times more of them, and the ring's byte count is what it really holds
    (orjson's own output buffer can be many times its length).
    """
    try:
        data = json_bytes.dumps(record, indent=True, non_str_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    return zlib.compress(data, 1)


class Counts:
    """Repairs per rule and rejections per upstream, per minute, for the last hour."""

    def __init__(self) -> None:
        self.minutes: collections.deque[tuple[int, collections.Counter[tuple[str, str]]]] = collections.deque()

    def add(self, entry: Entry) -> None:
        minute = int(entry.timestamp // 60)
        if not self.minutes or self.minutes[-1][0] != minute:
            self.minutes.append((minute, collections.Counter()))
            while self.minutes and self.minutes[0][0] <= minute - MINUTES:
                self.minutes.popleft()
        counter = self.minutes[-1][1]
        for code in entry.repairs:
            counter["repair", code] += 1
        if entry.rejected:
            counter["rejection", entry.upstream or entry.route] += 1

    def series(self, now: float | None = None) -> dict[tuple[str, str], list[int]]:
        """Each series' count for each of the last ``MINUTES`` minutes, oldest first."""
        last = int((time.time() if now is None else now) // 60)
        out: dict[tuple[str, str], list[int]] = {}
        for minute, counter in self.minutes:
            slot = minute - (last - MINUTES + 1)
            if 0 <= slot < MINUTES:
                for key, n in counter.items():
                    out.setdefault(key, [0] * MINUTES)[slot] += n
        return out


class Ring:
    """The last ``max_entries`` requests, holding at most ``max_bytes``, oldest dropped first."""

    def __init__(self, max_entries: int, max_bytes: int, *, keep_bodies: bool = True) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.keep_bodies = keep_bodies
        self.entries: collections.deque[Entry] = collections.deque()
        self.bytes = 0
        self.counts = Counts()
        self._seq = 0
        self._queues: set[asyncio.Queue[Entry]] = set()
        self.pending: set[asyncio.Future[Any]] = set()
        """Entries on their way in: their captures being encoded in a worker thread (:class:`Feed`)."""

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def add(self, entry: Entry) -> None:
        """Keep ``entry`` (its capture only if it fits the cap with room for others) and tell the pages."""
        if entry.capture is not None and (not self.keep_bodies or entry.size > self.max_bytes // 2):
            entry = _without_capture(entry)
        self.entries.append(entry)
        self.bytes += entry.size
        while self.entries and (len(self.entries) > self.max_entries or self.bytes > self.max_bytes):
            self.bytes -= self.entries.popleft().size
        self.counts.add(entry)
        for queue in self._queues:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(entry)

    async def settled(self, timeout: float) -> None:
        """Wait, ``timeout`` seconds at most, for the entries on their way in now: a page asked for
        after a request ended shows that request."""
        if self.pending:
            await asyncio.wait(set(self.pending), timeout=timeout)

    def find(self, request_id: str) -> Entry | None:
        """The latest entry of ``request_id``."""
        for entry in reversed(self.entries):
            if entry.request_id == request_id:
                return entry
        return None

    def newest_first(self) -> Iterator[Entry]:
        return reversed(self.entries)

    @contextlib.contextmanager
    def subscribe(self) -> Iterator[asyncio.Queue[Entry]]:
        """A queue of the entries added from now on, for one page's event stream."""
        queue: asyncio.Queue[Entry] = asyncio.Queue(QUEUE_SIZE)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            self._queues.discard(queue)


def _without_capture(entry: Entry) -> Entry:
    return Entry(**{name: getattr(entry, name) for name in Entry.__slots__ if name != "capture"})


def entry_from_capture(seq: int, record: Mapping[str, Any], capture: bytes) -> Entry:
    """A capture file as the page lists it (``suture captures serve``); ``capture``: the file's bytes."""
    status = record.get("upstream_status")
    stamp = str(record.get("timestamp", ""))
    try:
        moment = float(calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        moment = 0.0
    original = record.get("original")
    model = original.get("model") if isinstance(original, Mapping) else None
    return Entry(
        seq=seq,
        request_id=shorten(str(record.get("request_id", "?")), NAME_CHARS),
        timestamp=float(moment),
        method="POST",
        path=shorten(str(record.get("path", "")), PATH_CHARS),
        route=shorten(route_name(str(record.get("route", "")), record.get("api")), NAME_CHARS),
        model=shorten(str(model or ""), MODEL_CHARS),
        upstream=shorten(str(record.get("route", "")), NAME_CHARS),
        status=status if isinstance(status, int) else 400,
        upstream_status=str(status),
        duration_ms=0.0,
        repairs=tuple(dict.fromkeys(str(r.get("code", "?")) for r in record.get("repairs") or ())),
        outcome=outcome_of(record.get("strict_rejection"), status, "complete"),
        capture=zlib.compress(capture, 1),
    )
