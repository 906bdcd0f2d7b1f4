"""Prometheus metrics, kept in a registry of the app's own so two apps in one process never mix."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

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
        self.requests = _Labelled(
            Counter(
                "suture_requests",
                "Requests answered by Suture, by route and status.",
                ["route", "method", "status"],
                registry=self.registry,
            )
        )
        self.request_seconds = _Labelled(
            Histogram(
                "suture_request_duration_seconds",
                "Time from request start to the last byte of the response (streams included).",
                ["route"],
                buckets=_LATENCY_BUCKETS,
                registry=self.registry,
            )
        )
        self.repairs = _Labelled(
            Counter(
                "suture_repairs",
                "Transcript repairs found, by rule code and mode (report mode finds but does not apply).",
                ["code", "rule", "mode"],
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
        )

    def watch_connections(self, upstream: str, pool: ConnectionCounts) -> None:
        """Read an upstream's pool at each scrape (never on the request path)."""
        self._connections.labels(upstream, "busy").set_function(lambda: pool.busy_connections)
        self._connections.labels(upstream, "idle").set_function(lambda: pool.idle_connections)

    def render(self) -> bytes:
        return generate_latest(self.registry)
