"""uvicorn's server as ``suture serve`` runs it, in one process or as N workers."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette


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


# How `suture serve --workers N` hands the worker processes the config file the parent used
# (empty: the default file). Not a SUTURE_* name, so it is never read as a setting.
WORKER_CONFIG_ENV = "_SUTURE_WORKER_CONFIG"


def app_from_env() -> Starlette:
    """The app of one worker of ``suture serve --workers N``, for uvicorn's import string.

    Each worker process builds its own app (its own upstream clients) from the config file
    named in ``_SUTURE_WORKER_CONFIG`` and the ``SUTURE_*`` environment it inherited. The parent
    loaded the same settings before starting any worker, so a config error is reported there,
    once, with status 2; a worker that still cannot load them (the file changed in between) says
    so in one line and exits 3, which makes uvicorn's supervisor stop the others.
    """
    from .app import build_app
    from .logs import configure_logging
    from .settings import ConfigError, load_settings

    path = os.environ.get(WORKER_CONFIG_ENV) or None
    try:
        settings = load_settings(Path(path) if path else None)
        app = build_app(settings)
    except ConfigError as exc:
        print(f"suture: config error: {exc}", file=sys.stderr)
        raise SystemExit(3) from None  # uvicorn's status for a worker that cannot start: stops the rest
    configure_logging(settings.log_level, settings.log_format)
    return app
