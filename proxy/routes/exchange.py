"""One request, from its head to the last byte of its answer, and the one place its end is written down.

The request-context middleware makes an :class:`Exchange` for every request; the endpoint, the
transcript path and the native or litellm path fill in what they learn (the route row, the
body, the repairs, the upstream's status, how the answer ended), and nothing is written while
they run. When the answer is over (streams included), the middleware calls :meth:`Exchange.finish`,
which writes the log lines, the metrics and the capture, each once.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from sanitizer import Repair

from ..capture import STRICT_REJECTED, CaptureDraft
from ..client_watch import ABORT_SCOPE_KEY, DISCONNECTED, ON_DISCONNECT_SCOPE_KEY, STALLED, ClientWatch
from ..logs import access_log, log, repair_log, upstream_log
from ..settings import RejectionRepairSettings
from ..upstreams.streamed import Outcome
from . import table
from .context import ProxyState
from .rejections import REJECTION_STATUSES, Retrier

if TYPE_CHECKING:
    from sanitizer import Repair

    from .lessons import School

_T = TypeVar("_T")

# Probes and scrapes: their access lines are debug-level.
_QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


_DONE: Scope = {"type": "http", "path": "", "method": ""}


@dataclass(eq=False, slots=True)
class Exchange:
    """What Suture knows about one request; ``scope["suture"]``, made by the middleware."""

    state: ProxyState
    scope: Scope
    request_id: str
    started: float = field(default_factory=time.perf_counter)
    request: Request | None = None
    """Starlette's view of the request, once an endpoint has one."""
    route: table.Route | None = None
    """The native route row, on the transcript paths."""
    provider: table.Provider | None = None
    """Whose upstream the request is for, once known: its errors' shape and its metrics' label."""
    hint: str | None = None
    """What the user should check, when Suture can tell (logged with the upstream's answer)."""
    label: str | None = None
    """The route's label in the metrics and the access line, when its path does not give it."""
    mode: str | None = None
    model: str | None = None
    """The model the body (or Gemini's path) names, for the page's list."""
    repairs: Sequence[Repair] = ()
    repairs_found: int = 0
    repairs_applied: int = 0
    capture: CaptureDraft | None = None
    rejection: str | None = None
    """Strict mode's refusal, when it refused."""
    upstream: str | None = None
    """The name of the upstream the request is for (a provider's section, or a route table
    upstream's name), once one was chosen."""
    upstream_status: int | str | None = None
    """The upstream's status, or why there is none (``unreachable``, ``timeout``...)."""
    upstream_seconds: float | None = None
    sent: float = 0.0
    """``perf_counter()`` when the request went upstream, once it was answered."""
    upstream_failure: str | None = None
    """Why the upstream gave no answer to relay (``unreachable``, ``timeout``, a refusal's status)."""
    upstream_error: str | None = None
    refused_body: bytes = b""
    """The error Suture relayed for a provider's refusal through litellm, for the capture."""
    answer: Outcome | None = None
    """How the relayed answer ended; None when Suture answered itself."""
    answer_encoding: str = ""
    answer_sample: list[bytes] | None = None
    spans: tuple[Any, Any] | None = None
    """The request's and the upstream call's spans, when tracing began them as the request went upstream."""
    """The first and the last bytes of the answer, kept only when tracing (its token usage)."""
    status: int = 500
    """The status the client was sent."""
    response_started: bool = False
    stamped: bool = False
    """The answer carries Suture's headers already (:meth:`stamp`)."""
    outcome: str = "complete"
    watch: ClientWatch | None = None
    retry_plan: tuple[str, str | None, str | None, RejectionRepairSettings, Any] | None = None
    """What a retry after a refusal would need (format, rules, model, allowance, body sent, its
    size), when this request may have one; the retrier itself is made only on a refusal."""
    retrier: Retrier | None = None
    """Repair from the provider's refusal, when this request may be retried after one."""
    school: School | None = None
    """The upstream as learnt fixes know it: where a fix a refusal needed is remembered."""

    @staticmethod
    def of(request: Request) -> Exchange:
        """The exchange of the request an endpoint was handed."""
        exchange: Exchange = request.scope["suture"]
        exchange.request = request
        return exchange

    def watch_client(self) -> ClientWatch:
        """This request's :class:`ClientWatch`, started on first call: call it once the body is read."""
        if self.watch is None:
            assert self.request is not None
            self.watch = ClientWatch(
                self.request.receive,
                send_timeout=self.state.settings.timeouts.client_send,
                abort=self.scope.get(ABORT_SCOPE_KEY),
                on_disconnect=self.scope.get(ON_DISCONNECT_SCOPE_KEY),
                loop=self.state.loop,
            )
        return self.watch

    def answered(self, status: int, sent: float) -> None:
        """The upstream's answer began (``sent``: ``perf_counter()`` when the request went)."""
        self.upstream_seconds = time.perf_counter() - sent
        self.upstream_status = status
        self.sent = sent

    def no_answer(
        self, outcome: str, *, status: int | None = None, error: str | None = None, body: bytes = b""
    ) -> None:
        """The upstream gave no answer to relay: ``outcome`` (``unreachable``, ``timeout``...), or the
        ``status`` a provider refused with (litellm), whose error ``body`` is what the client gets."""
        self.upstream_status = outcome if status is None else status
        self.upstream_error = error
        self.refused_body = body
        self.upstream_failure = outcome

    def ended(self, answer: Outcome, encoding: str = "") -> None:
        """The relayed answer ended, whole or not."""
        self.answer, self.answer_encoding = answer, encoding
        self.outcome = answer.outcome

    def client_gone(self, reason: str) -> Response:
        """The client left before the answer's first byte."""
        self.ended(Outcome(reason))
        # Nobody reads this answer; its status (nginx's "client closed request") is for the access log.
        return Response(status_code=499)

    def retrier_for(self, status: int) -> Retrier | None:
        """This request's retrier, made on its first answer with a refusal's ``status``."""
        plan = self.retry_plan
        if self.retrier is None and plan is not None and status in REJECTION_STATUSES:
            api, rules_for, model, allowance, body = plan
            self.retrier = Retrier(self, api, rules_for, model, self.state.policy, allowance, body)
        return self.retrier

    async def off_loop(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` in a worker thread, the event loop free meanwhile; the client's leaving
        ends the wait at once (the thread runs on, its result dropped) with :class:`ClientGone`.

        On the loop's own executor rather than anyio's worker threads: anyio's wait outlasts a
        cancellation until the thread is done, and its handoff costs about 50 µs more.
        """
        loop = self.state.loop or asyncio.get_running_loop()
        with self.watch_client():
            return await loop.run_in_executor(None, work, *args)

    def stamp(self) -> list[tuple[bytes, bytes]]:
        """Suture's headers on the answer: its request id and the repairs applied. The provider's
        own ids (``x-request-id``, ``request-id``) pass unchanged: support asks for those."""
        self.stamped = True
        return [
            (b"x-suture-request-id", self.request_id.encode()),
            (b"x-suture-repairs", str(self.repairs_applied).encode()),
        ]

    def wants_error_body(self, status: int) -> bool:
        """Whether the capture needs the answer's first bytes (an error answer it will keep)."""
        # A draft exists only when a capture or the page will keep it.
        return self.capture is not None and status >= 400 and self.capture.wanted(status)

    # ---------------------------------------------------------------- the tail, written once

    def finish(self) -> None:
        """Stop watching the client, and write what happened: the upstream's metrics and log lines,
        the capture, the access line."""
        elapsed = time.perf_counter() - self.started
        if self.watch is not None:
            self.watch.close()
        state = self.state
        metrics = state.metrics
        # The upstream's name, and the client's model from a bounded set: label values, once.
        upstream_label = self.upstream or (self.provider.name if self.provider is not None else "")
        model_label = state.model_labels(self.model)
        for repair in self.repairs:
            metrics.repairs.labels(repair.code, repair.rule, str(self.mode), model_label, upstream_label).inc()
        status = self.upstream_status
        if status is not None:
            if self.upstream_seconds is not None:
                metrics.upstream_seconds.labels(upstream_label).observe(self.upstream_seconds)
                metrics.upstream_responses.labels(upstream_label, str(status)).inc()
                if self.hint is not None:
                    log(upstream_log, logging.WARNING, self.hint, request_id=self.request_id, upstream=self.upstream)
            else:
                self._upstream_failed(upstream_label, status)
            if status == 400 and self.repairs_applied:
                # The signal for a new rule: Suture repaired what it knows and the provider still said no.
                metrics.repaired_rejections.labels(upstream_label).inc()
                log(
                    repair_log,
                    logging.WARNING,
                    "provider still rejected the repaired transcript: a rule Suture does not know yet",
                    request_id=self.request_id,
                    upstream=self.upstream,
                    repairs_applied=self.repairs_applied,
                    captured=self.capture is not None,
                )
        answer = self.answer
        if answer is not None:
            if answer.outcome in (DISCONNECTED, STALLED):
                self._client_left(upstream_label, answer.outcome, answer.bytes_sent)
            elif answer.outcome == "upstream_error":
                log(
                    upstream_log,
                    logging.ERROR,
                    "provider failed mid-stream; the client got an error event"
                    if answer.error_event
                    else "upstream failed mid-response; client connection dropped",
                    request_id=self.request_id,
                    upstream=self.upstream,
                    error=answer.error,
                    bytes_relayed=answer.bytes_sent,
                )
        record = self._capture(self.capture, status) if self.capture is not None else None
        scope = self.scope
        path: str = scope["path"]
        # Templated paths (Gemini's, Bedrock's) are labelled by their pattern: a bounded set.
        route: str = self.label or (
            path if path in self.state.fixed_paths else str(getattr(scope.get("route"), "path", "other"))
        )
        metrics.requests.labels(route, scope["method"], str(self.status), model_label, upstream_label).inc()
        metrics.request_seconds.labels(route, upstream_label).observe(elapsed)
        # Probes and scrapes arrive every few seconds: their lines would drown the traffic.
        level = logging.DEBUG if path in _QUIET_PATHS else logging.INFO
        if access_log.isEnabledFor(level):
            self._access_line(level, path, route, elapsed)
        if self.state.ui is not None:
            self.state.ui.record(self, route, elapsed, record)
        if state.tracer is not None:
            state.tracer.record(self, elapsed, route)
        # The scope holds this exchange, and this exchange the scope and the request (and its
        # retrier holds it back): cycles only the garbage collector would free, for every request
        # (17% more CPU per request under load, measured). Broken here, once nothing reads them.
        self.request = None
        self.scope = _DONE
        self.retrier = None

    def _access_line(self, level: int, path: str, route: str, elapsed: float) -> None:
        scope = self.scope
        log(
            access_log,
            level,
            "request",
            request_id=self.request_id,
            method=scope["method"],
            path=path,
            route=route,
            status=self.status,
            duration_ms=round(elapsed * 1000, 1),
            repairs=self.repairs_found,
            repairs_applied=self.repairs_applied,
            mode=self.mode,
            model=self.model if self.model is None or len(self.model) <= 128 else self.model[:128] + "…",
            upstream=self.upstream,
            upstream_status=self.upstream_status,
            outcome=self.outcome,
            retried=self.retrier.attempts if self.retrier is not None else 0,
        )

    def _upstream_failed(self, label: str, status: int | str) -> None:
        outcome = self.upstream_failure or str(status)
        self.state.metrics.upstream_responses.labels(label, outcome).inc()
        fields = {"error": self.upstream_error} if self.upstream_error is not None else {}
        log(
            upstream_log,
            logging.WARNING,
            "provider refused" if isinstance(status, int) else "upstream failed",
            request_id=self.request_id,
            upstream=self.upstream,
            outcome=outcome,
            **fields,
        )

    def _client_left(self, label: str, reason: str, relayed: int) -> None:
        self.state.metrics.disconnects.labels(label).inc()
        log(
            upstream_log,
            logging.WARNING,
            "client disconnected; upstream request cancelled"
            if reason == DISCONNECTED
            else "client stopped reading; both connections closed",
            request_id=self.request_id,
            upstream=self.upstream,
            bytes_relayed=relayed,
        )

    def _capture(self, draft: CaptureDraft, status: int | str | None) -> dict[str, Any] | None:
        """The capture record, when this request is one to keep, handed to the capture store if on."""
        if self.rejection is not None:
            record = draft.finish(STRICT_REJECTED, rejection=self.rejection)
        elif status is not None and draft.wanted(status):
            head = self.answer.head if self.answer is not None else self.refused_body
            record = draft.finish(status, head, self.answer_encoding)
        else:
            return None
        if self.state.capture is not None:
            self.state.capture.submit(record)
        return record


_CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]+")
# A random prefix per process and a counter: unique like uuid4, without a urandom syscall on
# every request (uuid4 was 5% of the proxy's CPU in a py-spy profile).
_ID_PREFIX = uuid.uuid4().hex[:16]
_ID_COUNTER = itertools.count()


def request_id_of(scope: Scope, max_length: int = 128) -> str:
    """Suture's id for a request: the client's ``x-request-id`` when it is well formed (and at most
    ``max_length`` characters), else a new one."""
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            candidate: str = value.decode("latin-1")
            if len(candidate) <= max_length and _CLIENT_REQUEST_ID.fullmatch(candidate):
                return candidate
            break
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"
