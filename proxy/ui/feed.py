"""Where the page's ring is fed: an observer of finished exchanges (:class:`Feed`)."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

from ..exchange import Exchange
from .ring import MODEL_CHARS, NAME_CHARS, PATH_CHARS, Entry, Ring, encode_capture, outcome_of, route_name, shorten

# Probes and scrapes are not what anyone opens the page to see.
_SKIPPED = frozenset({"/healthz", "/readyz", "/metrics"})
# Captures being encoded at once; past this, a request is kept without its capture (as the capture
# store drops writes past its own bound) rather than its record held in a growing queue.
MAX_PENDING = 64


class Feed:
    """The ring, and which requests go in it: all but the page's own and the probes."""

    def __init__(self, ring: Ring, page_path: str) -> None:
        self.ring = ring
        self.page_prefix = page_path.rstrip("/") + "/"
        self.page_path = page_path.rstrip("/")

    def finished(self, exchange: Exchange) -> None:
        """Add one finished request, with its capture record when it made one.

        A capture is encoded (orjson and zlib: 0.4 s for a 30 MB transcript) in a worker thread, and
        its entry added when that is done, numbered then so the ring's order is its numbers' order
        (the event stream resumes from a number). Called on the event loop.
        """
        path: str = exchange.scope["path"]
        if path in _SKIPPED or path == self.page_path or path.startswith(self.page_prefix):
            return
        ring = self.ring
        destination, transcript, call = exchange.destination, exchange.transcript, exchange.upstream
        provider = destination.provider.name if destination.provider is not None else None
        capture = exchange.capture
        fields: dict[str, Any] = {
            "request_id": shorten(exchange.request_id, NAME_CHARS),
            "timestamp": time.time(),
            "method": exchange.scope["method"],
            "path": shorten(path, PATH_CHARS),
            # The provider's name, as captures name the route: the live page and the offline one agree.
            "route": shorten(
                route_name(provider, destination.route.api if destination.route is not None else None)
                if provider
                else exchange.route_label,
                NAME_CHARS,
            ),
            "model": shorten(transcript.model or "", MODEL_CHARS),
            "upstream": shorten(destination.upstream or provider or "", NAME_CHARS),
            "status": exchange.answer.status,
            "upstream_status": "" if call.outcome is None else str(call.outcome),
            "duration_ms": round(exchange.elapsed * 1000, 1),
            "repairs": tuple(dict.fromkeys(r.code for r in transcript.repairs)),
            "outcome": outcome_of(transcript.strict_refusal, call.outcome, exchange.answer.outcome),
        }
        if capture is None or not ring.keep_bodies or len(ring.pending) >= MAX_PENDING:
            ring.add(Entry(seq=ring.next_seq(), **fields))
            return
        encoding = asyncio.get_running_loop().run_in_executor(None, encode_capture, capture)
        ring.pending.add(encoding)
        encoding.add_done_callback(functools.partial(self._encoded, fields))

    def _encoded(self, fields: dict[str, Any], encoding: asyncio.Future[bytes | None]) -> None:
        ring = self.ring
        ring.pending.discard(encoding)
        failed = encoding.cancelled() or encoding.exception() is not None
        ring.add(Entry(seq=ring.next_seq(), capture=None if failed else encoding.result(), **fields))
