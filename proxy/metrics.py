"""Prometheus metrics, kept in a registry of the app's own so two apps in one process never mix.

With ``suture serve --workers N`` each worker writes its values to files in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus_client's multiprocess mode, set up by
:mod:`proxy.multiproc`), and a scrape, whichever worker answers it, reads them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import platform
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Generic, Protocol, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

M = TypeVar("M", Counter, Histogram)


class _Labelled(Generic[M]):
    """A labelled metric whose children are found in a plain dict: prometheus_client's own
    ``labels()`` validates and takes a lock on every call, and the request path calls it four
    times per request (about a tenth of the proxy's CPU; bench/run.py). Same children, same
    cardinality as prometheus_client keeps."""

    def __init__(self, metric: M) -> None:
        self.metric: M = metric
        self._children: dict[tuple[str, ...], M] = {}

    def labels(self, *values: str) -> M:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self.metric.labels(*values)
        return child


class ConnectionCounts(Protocol):
    @property
    def busy_connections(self) -> int: ...
    @property
    def idle_connections(self) -> int: ...


class Metrics:
    """The counters and histograms of one Suture app."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.multiprocess_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
        """Set in the workers of ``suture serve --workers N``: values live in files there."""
        self.requests = _Labelled(
            Counter(
                "suture_requests",
                "Requests answered by Suture, by route, status, the client's model (bounded: `other` past "
                "the route table's names and the first 100 others) and the upstream's name.",
                ["route", "method", "status", "model", "upstream"],
                registry=self.registry,
            )
        )
        self.request_seconds = _Labelled(
            Histogram(
                "suture_request_duration_seconds",
                "Time from request start to the last byte of the response (streams included).",
                ["route", "upstream"],
                buckets=_LATENCY_BUCKETS,
                registry=self.registry,
            )
        )
        self.repairs = _Labelled(
            Counter(
                "suture_repairs",
                "Transcript repairs found, by rule code and mode (report mode finds but does not apply), "
                "the client's model and the upstream's name.",
                ["code", "rule", "mode", "model", "upstream"],
                registry=self.registry,
            )
        )
        self.rejections = _Labelled(
            Counter(
                "suture_strict_rejections",
                "Requests rejected locally by strict mode.",
                ["upstream"],
                registry=self.registry,
            )
        )
        self.rejection_repairs = _Labelled(
            Counter(
                "suture_rejection_repairs",
                "Retries after a transcript refusal Suture repaired, by upstream, how the retry ended "
                "(accepted / refused_again) and the strategy.",
                ["upstream", "outcome", "strategy"],
                registry=self.registry,
            )
        )
        self.lessons_learnt = _Labelled(
            Counter(
                "suture_lessons_learnt",
                "Fixes learnt from an upstream's repaired refusal, by upstream and fix: later requests get them first.",
                ["upstream", "fix"],
                registry=self.registry,
            )
        )
        self.lessons_applied = _Labelled(
            Counter(
                "suture_lessons_applied",
                "Requests that got a fix learnt from an earlier refusal (or stated in the config) before their "
                "first attempt, by upstream and fix.",
                ["upstream", "fix"],
                registry=self.registry,
            )
        )
        self.repaired_rejections = _Labelled(
            Counter(
                "suture_repaired_rejections",
                "Repaired transcripts the provider still rejected with a 400: a defect no rule repairs yet.",
                ["upstream"],
                registry=self.registry,
            )
        )
        self.upstream_responses = _Labelled(
            Counter(
                "suture_upstream_responses",
                "Upstream outcomes: an HTTP status, or unreachable / timeout.",
                ["upstream", "status"],
                registry=self.registry,
            )
        )
        self.upstream_seconds = _Labelled(
            Histogram(
                "suture_upstream_response_seconds",
                "Time from sending a request upstream to receiving the response headers.",
                ["upstream"],
                buckets=_LATENCY_BUCKETS,
                registry=self.registry,
            )
        )
        self.disconnects = _Labelled(
            Counter(
                "suture_client_disconnects",
                "Responses cut short because the client went away; the upstream request was cancelled.",
                ["upstream"],
                registry=self.registry,
            )
        )

        self._connections = Gauge(
            "suture_upstream_connections",
            "Open connections to each upstream, busy or idle; at max_connections, requests wait for one.",
            ["upstream", "state"],
            registry=self.registry,
            # Several workers: the sum over the live ones (a dead worker's pool is gone with it).
            multiprocess_mode="livesum",
        )
        self._pools: list[tuple[str, ConnectionCounts]] = []
        if self.multiprocess_dir is None:
            self.registry.register(_BuildInfo())
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            self._scraped = self.registry
        else:
            # Collectors that read this process only would describe whichever worker answers.
            self._scraped = CollectorRegistry()
            MultiProcessCollector(self._scraped, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
            self._scraped.register(_BuildInfo())
            self._scraped.register(_WorkerProcesses(self.multiprocess_dir))
            PlatformCollector(registry=self._scraped)

    def watch_connections(self, upstream: str, pool: ConnectionCounts) -> None:
        """Read an upstream's pool at each scrape (never on the request path)."""
        if self.multiprocess_dir is None:
            self._connections.labels(upstream, "busy").set_function(lambda: pool.busy_connections)
            self._connections.labels(upstream, "idle").set_function(lambda: pool.idle_connections)
        else:
            # A function cannot be read from another process: each worker writes its pool's counts.
            self._pools.append((upstream, pool))
            self._write_pools()

    def _write_pools(self) -> None:
        for upstream, pool in self._pools:
            self._connections.labels(upstream, "busy").set(pool.busy_connections)
            self._connections.labels(upstream, "idle").set(pool.idle_connections)

    @contextlib.asynccontextmanager
    async def publishing(self, every: float = 1.0) -> AsyncIterator[None]:
        """With several workers, write this worker's pool counts every ``every`` seconds (off the
        request path), for scrapes answered by the other workers."""
        if not self._pools:
            yield
            return

        async def publish() -> None:
            while True:
                await asyncio.sleep(every)
                self._write_pools()

        task = asyncio.get_running_loop().create_task(publish())
        try:
            yield
        finally:
            task.cancel()

    def render(self) -> bytes:
        if self._pools:
            self._write_pools()
        return generate_latest(self._scraped)


def version() -> str:
    """The installed distribution's version; a checkout that was never installed says so."""
    try:
        return importlib.metadata.version("suture")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


class _BuildInfo(Collector):
    """``suture_build_info{version,python} 1``: which Suture answers, as Prometheus servers do."""

    def __init__(self) -> None:
        self._family = GaugeMetricFamily(
            "suture_build_info", "Suture's version and the Python it runs on; always 1.", labels=["version", "python"]
        )
        self._family.add_metric([version(), platform.python_version()], 1)

    def collect(self) -> Iterable[Metric]:
        return [self._family]


_PID = re.compile(r"_(\d+)\.db$")


class _WorkerProcesses(Collector):
    """The standard ``process_*`` metrics of every live worker, each with its ``pid`` label.

    The workers are the processes that own files in the multiprocess directory; /proc tells the
    live ones. A scrape reaches one worker, which reads the others' /proc entries as its own."""

    def __init__(self, path: str) -> None:
        self._path = path

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for pid in sorted(self._live_pids()):
            for family in ProcessCollector(pid=lambda pid=pid: pid, registry=None).collect():  # type: ignore[misc]
                merged = families.get(family.name)
                if merged is None:
                    merged = families[family.name] = Metric(family.name, family.documentation, family.type)
                merged.samples.extend(s._replace(labels={**s.labels, "pid": str(pid)}) for s in family.samples)
        yield from families.values()

    def _live_pids(self) -> set[int]:
        try:
            names = os.listdir(self._path)
        except OSError:
            return set()
        pids = {int(match.group(1)) for name in names if (match := _PID.search(name))}
        return {pid for pid in pids if os.path.exists(f"/proc/{pid}")}
