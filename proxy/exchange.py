"""One request, from its head to the last byte of its answer; what the app holds for its lifetime;
and the observers that are told of every request once it is over.

The request-context middleware makes an :class:`Exchange` for every request. It is five small
records, each written in one place (mitmproxy's flow has its request, response and error):

* :class:`Destination`, the route: written by the endpoint (route row, provider, label) and by the
  path that chooses the upstream (its name, what lessons know of it);
* :class:`TranscriptRecord`, the repair: written by the transcript path, and by the retry after a
  refusal through :meth:`TranscriptRecord.add_rejection_repairs`;
* :class:`UpstreamCall`, the upstream attempt(s): written through :meth:`Exchange.answered` and
  :meth:`Exchange.no_answer`, its retries by the retry loop;
* :class:`Answer`, what the client got: written by the middleware's ``send`` and the relays'
  ``on_done`` (:meth:`Exchange.ended`);
* Starlette's ``request``, once an endpoint has one.

Nothing is written down while the request runs. When the answer is over (streams included), the
middleware calls :meth:`Exchange.finish`, which hands the exchange to each :class:`Observer`
registered at start-up (metrics, access log, capture store, the page's feed, the tracer): adding
one touches no request code. This module imports no observer: they import it.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from sanitizer import Policy, Repair

from .browsers import BrowserGuard
from .capture import STRICT_REJECTED, CaptureDraft, Capturer
from .client_watch import ABORT_SCOPE_KEY, ON_DISCONNECT_SCOPE_KEY, ClientWatch
from .learnt import LearntProfiles, School
from .metrics import Metrics
from .provider_table import Provider, Route
from .redaction import Secrets
from .routes.model_routes import Router
from .settings import RejectionRepairSettings, Settings
from .upstreams.native import Upstream
from .upstreams.streamed import Outcome, StreamedAnswer

_T = TypeVar("_T")

_DONE: Scope = {"type": "http", "path": "", "method": ""}


class Observer(Protocol):
    """Told of every finished exchange, once, on the event loop; must not raise or block."""

    def finished(self, exchange: Exchange) -> None: ...


class UpstreamTracer(Protocol):
    """The tracer's part in the request path (native routes): its spans begin as the request goes
    upstream, and it samples the relayed answer for its token usage."""

    def begin(self, exchange: Exchange) -> list[tuple[bytes, bytes]]: ...

    def sample(self, answer: StreamedAnswer, exchange: Exchange) -> None: ...

    def shutdown(self) -> None: ...


@dataclass
class ProxyState:
    """Built once by ``build_app``; the lifespan fills ``upstreams`` and flips ``ready``."""

    settings: Settings
    policy: Policy
    metrics: Metrics
    upstreams: dict[str, Upstream] = field(default_factory=dict)
    ready: bool = False
    capture: Capturer | None = None
    """Set when ``capture.dir`` is; the lifespan runs it."""
    router: Router = field(default_factory=lambda: Router([]))
    named_upstreams: dict[str, Upstream] = field(default_factory=dict)
    """The native upstreams of the route table, by name; the lifespan fills it."""
    secrets: Secrets = field(default_factory=lambda: Secrets(()))
    """Every key Suture loaded: masked out of whatever it relays, captures or logs."""
    loop: asyncio.AbstractEventLoop | None = None
    """The event loop the lifespan runs on, which serves every request."""
    fixed_paths: frozenset[str] = frozenset()
    """Paths without a template: the metrics label them by themselves."""
    page_keeps_bodies: bool = False
    """The page is on and keeps requests' bodies: every request needs a capture draft."""
    tracer: UpstreamTracer | None = None
    """Set when OpenTelemetry tracing is on (``otel.enabled``); None costs nothing per request."""
    learnt: LearntProfiles | None = None
    """The fixes learnt from repaired refusals, when ``learning.enabled``."""
    browsers: BrowserGuard = field(default_factory=lambda: BrowserGuard("127.0.0.1"))
    """The Host and Origin checks every request passes before anything of it is read."""
    observers: list[Observer] = field(default_factory=list)
    """Told of every finished exchange, in order; registered by ``build_app``."""

    @property
    def drafts(self) -> bool:
        """Whether requests keep a capture draft: for the capture directory, or for the page's bodies."""
        return self.capture is not None or self.page_keeps_bodies


def state_of(request: Request) -> ProxyState:
    """The app's state, from any request."""
    state: ProxyState = request.app.state.suture
    return state


@dataclass(frozen=True, slots=True)
class RetryPlan:
    """What a retry after a refusal would need, when this request may have one; the retrier itself
    is made only on a refusal."""

    api: str
    rules_for: str | None
    """Whose rules the refused body was repaired by (a provider's name), or None."""
    model: str | None
    allowance: RejectionRepairSettings
    body: Any
    """The body as it was sent."""


@dataclass(slots=True)
class Destination:
    """Where the request goes: the endpoint writes the first three, the path that chooses the
    upstream the last two."""

    route: Route | None = None
    """The native route row, on the transcript paths."""
    provider: Provider | None = None
    """Whose upstream the request is for, once known: its errors' shape and its metrics' label."""
    label: str | None = None
    """The route's label in the metrics and the access line, when its path does not give it."""
    upstream: str | None = None
    """The name of the upstream (a provider's section, or a route table upstream's), once chosen."""
    school: School | None = None
    """The upstream as learnt fixes know it: where a fix a refusal needed is remembered."""

    @property
    def upstream_label(self) -> str:
        """The upstream's name as metrics label it: the provider's, before one was chosen."""
        return self.upstream or (self.provider.name if self.provider is not None else "")


@dataclass(slots=True)
class TranscriptRecord:
    """What the transcript path read and did: written by it, and by a retry's repairs."""

    model: str | None = None
    """The model the body (or Gemini's path) names, for the page's list."""
    mode: str | None = None
    repairs: Sequence[Repair] = ()
    found: int = 0
    """Repairs the rules found (in strict and detect modes, not applied)."""
    applied: int = 0
    strict_refusal: str | None = None
    """Strict mode's refusal, when it refused."""
    draft: CaptureDraft | None = None
    retry_plan: RetryPlan | None = None

    def add_rejection_repairs(self, repairs: Sequence[Repair]) -> None:
        """Repairs a retry after the provider's refusal applied."""
        self.repairs = [*self.repairs, *repairs]
        self.found += len(repairs)
        self.applied += len(repairs)


@dataclass(slots=True)
class UpstreamCall:
    """The call to the upstream: its answer's status, or why it gave none."""

    status: int | None = None
    """The status of the upstream's (last) answer."""
    failure: str | None = None
    """Why there is no answer to relay (``unreachable``, ``timeout``...), or the status a
    provider refused with through litellm, as text."""
    error: str | None = None
    """The cause of a ``failure``, for the log (never a provider's text: it may quote a key)."""
    sent_at: float = 0.0
    """``perf_counter()`` when the (last) request went upstream; 0 if none went."""
    seconds: float | None = None
    """From sending to the answer's head, when there was one."""
    retries: int = 0
    """Attempts after a refusal."""
    refused_body: bytes = b""
    """The error Suture relayed for a provider's refusal through litellm, for the capture."""
    hint: str | None = None
    """What the user should check, when Suture can tell (logged with the upstream's answer)."""
    spans: tuple[Any, Any] | None = None
    """The request's and the call's spans, when tracing began them as the request went upstream."""

    @property
    def outcome(self) -> int | str | None:
        """The upstream's status, or why there is none; None when nothing went upstream."""
        if self.failure is not None and self.status is None:
            return self.failure
        return self.status


@dataclass(slots=True)
class Answer:
    """What the client got."""

    status: int = 500
    started: bool = False
    """The head went to the client."""
    stamped: bool = False
    """The answer carries Suture's headers already (:meth:`Exchange.stamp`)."""
    outcome: str = "complete"
    relayed: Outcome | None = None
    """How the relayed answer ended; None when Suture answered itself."""
    encoding: str = ""
    sample: list[bytes] | None = None
    """The first and the last bytes of the answer, kept only when tracing (its token usage)."""


@dataclass(eq=False, slots=True)
class Exchange:
    """What Suture knows about one request; ``scope["suture"]``, made by the middleware."""

    state: ProxyState
    scope: Scope
    request_id: str
    started: float = field(default_factory=time.perf_counter)
    request: Request | None = None
    """Starlette's view of the request, once an endpoint has one."""
    destination: Destination = field(default_factory=Destination)
    transcript: TranscriptRecord = field(default_factory=TranscriptRecord)
    upstream: UpstreamCall = field(default_factory=UpstreamCall)
    answer: Answer = field(default_factory=Answer)
    watch: ClientWatch | None = None
    elapsed: float = 0.0
    """Seconds from the head to the last byte; set by :meth:`finish`."""
    route_label: str = ""
    """The route's label in the metrics, the access line and the page; set by :meth:`finish`."""
    capture: dict[str, Any] | None = None
    """The capture record, when this request is one to keep; set by :meth:`finish`."""

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

    def answered(self, status: int, sent: float | None = None) -> None:
        """The upstream's answer began (``sent``: ``perf_counter()`` when the request went, if not
        written down when it went)."""
        call = self.upstream
        if sent is not None:
            call.sent_at = sent
        call.seconds = time.perf_counter() - call.sent_at
        call.status = status

    def no_answer(
        self, failure: str, *, status: int | None = None, error: str | None = None, body: bytes = b""
    ) -> None:
        """The upstream gave no answer to relay: ``failure`` (``unreachable``, ``timeout``...), or the
        ``status`` a provider refused with (litellm), whose error ``body`` is what the client gets."""
        call = self.upstream
        call.status = status
        call.failure = failure
        call.error = error
        call.refused_body = body

    def ended(self, relayed: Outcome, encoding: str = "") -> None:
        """The relayed answer ended, whole or not."""
        answer = self.answer
        answer.relayed, answer.encoding = relayed, encoding
        answer.outcome = relayed.outcome

    def client_gone(self, reason: str) -> Response:
        """The client left before the answer's first byte."""
        self.ended(Outcome(reason))
        # Nobody reads this answer; its status (nginx's "client closed request") is for the access log.
        return Response(status_code=499)

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
        """Suture's headers on the answer: its request id, the repairs applied and, when there
        were any, which rules made them (``x-suture-rules: TP001,AN002``). The provider's own ids
        (``x-request-id``, ``request-id``) pass unchanged: support asks for those."""
        self.answer.stamped = True
        transcript = self.transcript
        headers = [
            (b"x-suture-request-id", self.request_id.encode()),
            (b"x-suture-repairs", str(transcript.applied).encode()),
        ]
        if transcript.applied:
            codes = ",".join(dict.fromkeys(repair.code for repair in transcript.repairs))
            headers.append((b"x-suture-rules", codes.encode()))
        return headers

    def wants_error_body(self, status: int) -> bool:
        """Whether the capture needs the answer's first bytes (an error answer it will keep)."""
        draft = self.transcript.draft
        # A draft exists only when a capture or the page will keep it.
        return draft is not None and status >= 400 and draft.wanted(status)

    def finish(self) -> None:
        """Stop watching the client, take the exchange's measures (elapsed time, route label,
        capture record), and hand it to each observer."""
        self.elapsed = time.perf_counter() - self.started
        if self.watch is not None:
            self.watch.close()
        scope = self.scope
        path: str = scope["path"]
        # Templated paths (Gemini's, Bedrock's) are labelled by their pattern: a bounded set.
        self.route_label = self.destination.label or (
            path if path in self.state.fixed_paths else str(getattr(scope.get("route"), "path", "other"))
        )
        draft = self.transcript.draft
        if draft is not None:
            self.capture = self._capture_record(draft)
        for observer in self.state.observers:
            observer.finished(self)
        # The scope holds this exchange, and this exchange the scope and the request: cycles only
        # the garbage collector would free, for every request (17% more CPU per request under
        # load, measured). Broken here, once nothing reads them.
        self.request = None
        self.scope = _DONE

    def _capture_record(self, draft: CaptureDraft) -> dict[str, Any] | None:
        """The capture record, when this request is one to keep."""
        if self.transcript.strict_refusal is not None:
            return draft.finish(STRICT_REJECTED, rejection=self.transcript.strict_refusal)
        outcome = self.upstream.outcome
        if outcome is not None and draft.wanted(outcome):
            relayed = self.answer.relayed
            head = relayed.head if relayed is not None else self.upstream.refused_body
            return draft.finish(outcome, head, self.answer.encoding)
        return None


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
