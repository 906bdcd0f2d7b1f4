"""The log lines of a finished exchange: its access line, and what went wrong upstream or with
the client, each at its level."""

from __future__ import annotations

import logging

from ..client_watch import DISCONNECTED, STALLED
from ..exchange import Exchange
from ..logs import access_log, log, repair_log, upstream_log

# Probes and scrapes: their access lines are debug-level.
_QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
_MAX_MODEL_CHARS = 128


class ExchangeLog:
    """Writes the lines of every finished exchange."""

    def finished(self, exchange: Exchange) -> None:
        call, transcript = exchange.upstream, exchange.transcript
        upstream = exchange.destination.upstream
        outcome = call.outcome
        if outcome is not None:
            if call.seconds is None:
                fields = {"error": call.error} if call.error is not None else {}
                log(
                    upstream_log,
                    logging.WARNING,
                    "provider refused" if isinstance(outcome, int) else "upstream failed",
                    request_id=exchange.request_id,
                    upstream=upstream,
                    outcome=call.failure or str(outcome),
                    **fields,
                )
            elif call.hint is not None:
                log(upstream_log, logging.WARNING, call.hint, request_id=exchange.request_id, upstream=upstream)
            if outcome == 400 and transcript.applied:
                log(
                    repair_log,
                    logging.WARNING,
                    "provider still rejected the repaired transcript: a rule Suture does not know yet",
                    request_id=exchange.request_id,
                    upstream=upstream,
                    repairs_applied=transcript.applied,
                    captured=transcript.draft is not None,
                )
        relayed = exchange.answer.relayed
        if relayed is not None:
            if relayed.outcome in (DISCONNECTED, STALLED):
                log(
                    upstream_log,
                    logging.WARNING,
                    "client disconnected; upstream request cancelled"
                    if relayed.outcome == DISCONNECTED
                    else "client stopped reading; both connections closed",
                    request_id=exchange.request_id,
                    upstream=upstream,
                    bytes_relayed=relayed.bytes_sent,
                )
            elif relayed.outcome == "upstream_error":
                log(
                    upstream_log,
                    logging.ERROR,
                    "provider failed mid-stream; the client got an error event"
                    if relayed.error_event
                    else "upstream failed mid-response; client connection dropped",
                    request_id=exchange.request_id,
                    upstream=upstream,
                    error=relayed.error,
                    bytes_relayed=relayed.bytes_sent,
                )
        path: str = exchange.scope["path"]
        # Probes and scrapes arrive every few seconds: their lines would drown the traffic.
        level = logging.DEBUG if path in _QUIET_PATHS else logging.INFO
        if access_log.isEnabledFor(level):
            _access_line(exchange, level, path)


def _access_line(exchange: Exchange, level: int, path: str) -> None:
    model = exchange.transcript.model
    if model is not None and len(model) > _MAX_MODEL_CHARS:
        model = model[:_MAX_MODEL_CHARS] + "…"
    log(
        access_log,
        level,
        "request",
        request_id=exchange.request_id,
        method=exchange.scope["method"],
        path=path,
        route=exchange.route_label,
        status=exchange.answer.status,
        duration_ms=round(exchange.elapsed * 1000, 1),
        repairs=exchange.transcript.found,
        repairs_applied=exchange.transcript.applied,
        mode=exchange.transcript.mode,
        model=model,
        upstream=exchange.destination.upstream,
        upstream_status=exchange.upstream.outcome,
        outcome=exchange.answer.outcome,
        retried=exchange.upstream.retries,
    )
