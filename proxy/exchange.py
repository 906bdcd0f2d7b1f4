"""One request on its way to an upstream and back, and the one place its end is written down.

The native and the litellm paths differ in how they reach the provider; what they record does
not: the upstream's status (or why there is none) in the request context, the upstream metrics,
the log lines of failures and of clients that left, and the capture. :class:`Exchange` holds
what the request path learned and writes each of these once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from .capture import CaptureDraft
from .client_watch import DISCONNECTED, STALLED
from .context import ProxyState, RequestContext, context_of, state_of
from .logs import log, repair_log, upstream_log
from .relay import Outcome
from .settings import RouteName


@dataclass
class Exchange:
    """What the request path knows about one request bound for an upstream."""

    state: ProxyState
    ctx: RequestContext
    route: RouteName
    upstream: str
    """The upstream's base URL, or a route table upstream's name, for the logs."""
    capture: CaptureDraft | None = None

    @classmethod
    def of(cls, request: Request, route: RouteName, upstream: str, capture: CaptureDraft | None) -> Exchange:
        return cls(state_of(request), context_of(request), route, upstream, capture)

    def no_answer(
        self, outcome: str, *, status: int | None = None, error: str | None = None, body: bytes = b""
    ) -> None:
        """The upstream gave no answer to relay: ``outcome`` (``unreachable``, ``timeout``...), or the
        ``status`` a provider refused with (litellm), whose error ``body`` is what the client gets."""
        recorded: int | str = outcome if status is None else status
        self.ctx.upstream_status = recorded
        self.state.metrics.upstream_responses.labels(self.route, outcome).inc()
        fields = {"error": error} if error is not None else {}
        event = "provider refused" if status is not None else "upstream failed"
        log(
            upstream_log,
            logging.WARNING,
            event,
            request_id=self.ctx.request_id,
            upstream=self.upstream,
            outcome=outcome,
            **fields,
        )
        self._unknown_rule(recorded)
        self._capture(recorded, body)

    def answered(self, status: int, sent: float) -> None:
        """The upstream's answer began (``sent``: ``perf_counter()`` when the request went)."""
        self.state.metrics.upstream_seconds.labels(self.route).observe(time.perf_counter() - sent)
        self.state.metrics.upstream_responses.labels(self.route, str(status)).inc()
        self.ctx.upstream_status = status
        self._unknown_rule(status)

    def wants_error_body(self, status: int) -> bool:
        """Whether the capture needs the answer's first bytes (an error answer it will keep)."""
        return (
            self.capture is not None
            and self.state.capture is not None
            and status >= 400
            and (self.capture.wanted(status))
        )

    def finish(self, result: Outcome, status: int, encoding: str = "") -> None:
        """The answer ended (relayed whole, or not): the outcome, its log line and the capture."""
        self.ctx.outcome = result.outcome
        self._capture(status, result.head, encoding)
        if result.outcome in (DISCONNECTED, STALLED):
            self._client_left(result.outcome, result.bytes_sent)
        elif result.outcome == "upstream_error":
            log(
                upstream_log,
                logging.ERROR,
                "provider failed mid-stream; the client got an error event"
                if result.error_event
                else "upstream failed mid-response; client connection dropped",
                request_id=self.ctx.request_id,
                upstream=self.upstream,
                error=result.error,
                bytes_relayed=result.bytes_sent,
            )

    def client_gone(self, reason: str) -> Response:
        """The client left before the answer's first byte."""
        self._client_left(reason, 0)
        # Nobody reads this answer; its status (nginx's "client closed request") is for the access log.
        return Response(status_code=499)

    def _client_left(self, reason: str, relayed: int) -> None:
        self.ctx.outcome = reason
        self.state.metrics.disconnects.labels(self.route).inc()
        log(
            upstream_log,
            logging.WARNING,
            "client disconnected; upstream request cancelled"
            if reason == DISCONNECTED
            else "client stopped reading; both connections closed",
            request_id=self.ctx.request_id,
            upstream=self.upstream,
            bytes_relayed=relayed,
        )

    def _unknown_rule(self, status: int | str) -> None:
        if status == 400 and self.ctx.repairs_applied:
            # The signal for a new rule: Suture repaired what it knows and the provider still said no.
            log(
                repair_log,
                logging.WARNING,
                "provider still rejected the repaired transcript: a rule Suture does not know yet",
                request_id=self.ctx.request_id,
                upstream=self.upstream,
                repairs_applied=self.ctx.repairs_applied,
                captured=self.capture is not None,
            )

    def _capture(self, status: int | str, head: bytes = b"", encoding: str = "") -> None:
        if self.capture is not None and self.state.capture is not None and self.capture.wanted(status):
            self.state.capture.submit(self.capture.finish(status, head, encoding))
