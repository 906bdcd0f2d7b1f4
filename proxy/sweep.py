"""One timer per event loop and period that checks many waits at once.

A timer per request, scheduled and cancelled, cost more than everything else a client watch does
(callgrind, bench/run.py's body). Waits that only need to end within a fraction of their timeout
(a client that stops reading, a client that stops sending) register a check here instead: one
timer per loop and period calls every check with the loop's time, and stops once none is left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

Check = Callable[[float], None]


class Sweep:
    """The checks of one event loop that run every ``period`` seconds; :meth:`of` finds or makes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, period: float) -> None:
        self.loop = loop
        self.period = period
        self.checks: set[Check] = set()
        self._handle = loop.call_later(period, self._tick)

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop, timeout: float) -> Sweep:
        """The sweep that notices a ``timeout`` within a quarter of it (and within a second)."""
        period = min(1.0, timeout / 4)
        sweep = _SWEEPS.get((loop, period))
        if sweep is None:
            sweep = _SWEEPS[loop, period] = cls(loop, period)
        return sweep

    def add(self, check: Check) -> None:
        """Call ``check`` at each tick until it is discarded; add right after :meth:`of` (a sweep
        left without checks at a tick stops for good)."""
        self.checks.add(check)

    def discard(self, check: Check) -> None:
        self.checks.discard(check)

    def _tick(self) -> None:
        now = self.loop.time()
        for check in list(self.checks):
            check(now)
        if self.checks:
            self._handle = self.loop.call_later(self.period, self._tick)
        elif _SWEEPS.get((self.loop, self.period)) is self:
            del _SWEEPS[self.loop, self.period]  # idle: a loop that ends leaves nothing behind


_SWEEPS: dict[tuple[asyncio.AbstractEventLoop, float], Sweep] = {}
