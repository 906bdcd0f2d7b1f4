"""Where the page's ring is fed: ``Exchange.finish`` hands each finished request to :class:`Feed`."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .ring import Entry, Ring, encode_capture, outcome_of

if TYPE_CHECKING:
    from ..routes.exchange import Exchange

# Probes and scrapes are not what anyone opens the page to see.
_SKIPPED = frozenset({"/healthz", "/readyz", "/metrics"})


class Feed:
    """The ring, and which requests go in it: all but the page's own and the probes."""

    def __init__(self, ring: Ring, page_path: str) -> None:
        self.ring = ring
        self.page_prefix = page_path.rstrip("/") + "/"
        self.page_path = page_path.rstrip("/")

    def record(self, exchange: Exchange, route: str, elapsed: float, capture: Mapping[str, Any] | None) -> None:
        """Add one finished request; ``capture`` is its capture record, when one was made."""
        path: str = exchange.scope["path"]
        if path in _SKIPPED or path == self.page_path or path.startswith(self.page_prefix):
            return
        ring = self.ring
        self.ring.add(
            Entry(
                seq=ring.next_seq(),
                request_id=exchange.request_id,
                timestamp=time.time(),
                method=exchange.scope["method"],
                path=path,
                # The provider's name, as captures name the route: the live page and the offline one agree.
                route=exchange.provider.name if exchange.provider is not None else route,
                model=exchange.model or "",
                upstream=exchange.upstream or (exchange.provider.name if exchange.provider is not None else ""),
                status=exchange.status,
                upstream_status="" if exchange.upstream_status is None else str(exchange.upstream_status),
                duration_ms=round(elapsed * 1000, 1),
                repairs=tuple(dict.fromkeys(r.code for r in exchange.repairs)),
                outcome=outcome_of(exchange.rejection, exchange.upstream_status, exchange.outcome),
                capture=encode_capture(capture) if capture is not None and ring.keep_bodies else None,
            )
        )
