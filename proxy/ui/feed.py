"""Where the page's ring is fed: ``Exchange.finish`` hands each finished request to :class:`Feed`."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .ring import MODEL_CHARS, NAME_CHARS, PATH_CHARS, Entry, Ring, encode_capture, outcome_of, shorten

if TYPE_CHECKING:
    from ..routes.exchange import Exchange

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

    def record(self, exchange: Exchange, route: str, elapsed: float, capture: Mapping[str, Any] | None) -> None:
        """Add one finished request; ``capture`` is its capture record, when one was made.

        A capture is encoded (orjson and zlib: 0.4 s for a 30 MB transcript) in a worker thread, and
        its entry added when that is done, numbered then so the ring's order is its numbers' order
        (the event stream resumes from a number). Call from the event loop.
        """
        path: str = exchange.scope["path"]
        if path in _SKIPPED or path == self.page_path or path.startswith(self.page_prefix):
            return
        ring = self.ring
        provider = exchange.provider.name if exchange.provider is not None else None
        fields: dict[str, Any] = {
            "request_id": shorten(exchange.request_id, NAME_CHARS),
            "timestamp": time.time(),
            "method": exchange.scope["method"],
            "path": shorten(path, PATH_CHARS),
            # The provider's name, as captures name the route: the live page and the offline one agree.
            "route": shorten(provider or route, NAME_CHARS),
            "model": shorten(exchange.model or "", MODEL_CHARS),
            "upstream": shorten(exchange.upstream or provider or "", NAME_CHARS),
            "status": exchange.status,
            "upstream_status": "" if exchange.upstream_status is None else str(exchange.upstream_status),
            "duration_ms": round(elapsed * 1000, 1),
            "repairs": tuple(dict.fromkeys(r.code for r in exchange.repairs)),
            "outcome": outcome_of(exchange.rejection, exchange.upstream_status, exchange.outcome),
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
