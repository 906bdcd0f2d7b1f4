"""Exact metrics with ``suture serve --workers N``: prometheus_client's multiprocess mode.

Each worker writes its counters, histograms and gauges to files of its own (named after its
pid) in ``PROMETHEUS_MULTIPROC_DIR``; a scrape, whichever worker answers it, adds them all up
(:class:`proxy.metrics.Metrics`). Following the library's documented caveats:

* the directory must be empty when the workers start, so ``suture serve`` makes a fresh one
  (and removes it on exit), or empties the one the operator named;
* it is set in the environment before the workers start, which import prometheus_client
  afresh (multiprocessing's spawn), so the library picks its file-backed values at import;
* gauges say how workers' values combine (``livesum`` for the pools); a dead worker's ``live*``
  gauge files are removed with ``mark_process_dead`` when the supervisor replaces it, while its
  counters stay counted, as a counter must never go down.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from socket import socket

from prometheus_client.multiprocess import mark_process_dead
from uvicorn import Config
from uvicorn.supervisors import Multiprocess

ENV = "PROMETHEUS_MULTIPROC_DIR"


@contextlib.contextmanager
def metrics_directory() -> Iterator[str]:
    """The workers' metrics directory, in the environment while the block runs: the operator's
    own (``PROMETHEUS_MULTIPROC_DIR``), emptied of a previous run's files, or a fresh one that
    is removed afterwards."""
    given = os.environ.get(ENV)
    if given:
        clear(given)
        yield given
        return
    path = tempfile.mkdtemp(prefix="suture-metrics-")
    os.environ[ENV] = path
    try:
        yield path
    finally:
        os.environ.pop(ENV, None)
        shutil.rmtree(path, ignore_errors=True)


def clear(path: str) -> None:
    """Remove a previous run's files: their counts belong to processes long gone."""
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)


class Supervisor(Multiprocess):
    """uvicorn's supervisor, which also tells prometheus_client when a worker is gone (died and
    replaced, or retired by a SIGHUP restart), so its live gauges stop counting it."""

    def __init__(self, config: Config, sockets: list[socket], *, metrics_dir: str) -> None:
        super().__init__(config, sockets)
        self.metrics_dir = metrics_dir

    def keep_subprocess_alive(self) -> None:
        before = self._pids()
        super().keep_subprocess_alive()
        self._bury(before - self._pids())

    def restart_all(self) -> None:
        before = self._pids()
        super().restart_all()
        self._bury(before - self._pids())

    def _pids(self) -> set[int]:
        return {process.pid for process in self.processes if process.pid is not None}

    def _bury(self, pids: set[int]) -> None:
        for pid in pids:
            mark_process_dead(pid, self.metrics_dir)  # type: ignore[no-untyped-call]
