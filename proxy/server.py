"""uvicorn's server as ``suture serve`` runs it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import uvicorn


class GracefulServer(uvicorn.Server):
    """uvicorn's server, except that a stop on SIGTERM or SIGINT exits with status 0.

    uvicorn re-raises the signal once it has shut down, so a graceful stop (in-flight requests
    finished within ``shutdown_grace_seconds``) looked to a supervisor like death by the signal.
    The first signal starts the graceful shutdown, a second SIGINT forces it (uvicorn's own
    ``handle_exit``).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
