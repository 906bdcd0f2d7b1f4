"""The Prometheus series of a finished exchange: its request, its repairs, its upstream's answer."""

from __future__ import annotations

from ..client_watch import DISCONNECTED, STALLED
from ..exchange import Exchange
from ..labels import ModelLabels
from ..metrics import Metrics


class ExchangeMetrics:
    """Counts and times every finished exchange."""

    def __init__(self, metrics: Metrics, model_labels: ModelLabels) -> None:
        self.metrics = metrics
        self.model_labels = model_labels

    def finished(self, exchange: Exchange) -> None:
        metrics = self.metrics
        # The upstream's name, and the client's model from a bounded set: label values, once.
        upstream_label = exchange.destination.upstream_label
        transcript, call = exchange.transcript, exchange.upstream
        model_label = self.model_labels(transcript.model)
        for repair in transcript.repairs:
            metrics.repairs.labels(repair.code, repair.rule, str(transcript.mode), model_label, upstream_label).inc()
        outcome = call.outcome
        if outcome is not None:
            if call.seconds is not None:
                metrics.upstream_seconds.labels(upstream_label).observe(call.seconds)
                metrics.upstream_responses.labels(upstream_label, str(outcome)).inc()
            else:
                metrics.upstream_responses.labels(upstream_label, call.failure or str(outcome)).inc()
            if outcome == 400 and transcript.applied:
                # The signal for a new rule: Suture repaired what it knows and the provider still said no.
                metrics.repaired_rejections.labels(upstream_label).inc()
        relayed = exchange.answer.relayed
        if relayed is not None and relayed.outcome in (DISCONNECTED, STALLED):
            metrics.disconnects.labels(upstream_label).inc()
        route = exchange.route_label
        method: str = exchange.scope["method"]
        metrics.requests.labels(route, method, str(exchange.answer.status), model_label, upstream_label).inc()
        metrics.request_seconds.labels(route, upstream_label).observe(exchange.elapsed)
