"""What the app holds for its lifetime, and what one request carries through the middleware."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import Request

from sanitizer import Policy

from .capture import Capturer
from .client_watch import ABORT_SCOPE_KEY, ON_DISCONNECT_SCOPE_KEY, ClientWatch
from .metrics import Metrics
from .redaction import Secrets
from .routing import Router
from .settings import RouteName, Settings
from .upstream import Upstream


@dataclass
class ProxyState:
    """Built once by ``build_app``; the lifespan fills ``upstreams`` and flips ``ready``."""

    settings: Settings
    policy: Policy
    metrics: Metrics
    upstreams: dict[RouteName, Upstream] = field(default_factory=dict)
    ready: bool = False
    capture: Capturer | None = None
    """Set when ``capture.dir`` is; the lifespan runs it."""
    router: Router = field(default_factory=lambda: Router([]))
    named_upstreams: dict[str, Upstream] = field(default_factory=dict)
    """The native upstreams of the route table, by name; the lifespan fills it."""
    secrets: Secrets = field(default_factory=lambda: Secrets(()))
    """Every key Suture loaded: masked out of whatever it relays, captures or logs."""


@dataclass
class RequestContext:
    """Per-request facts the endpoints fill in and the access log and headers report."""

    request_id: str
    repairs_applied: int = 0
    repairs_found: int = 0
    mode: str | None = None
    upstream_status: int | str | None = None
    outcome: str = "complete"
    response_started: bool = False
    watch: ClientWatch | None = None
    """Watches the client once its request is read (:func:`watch_client`); closed by the middleware."""


def state_of(request: Request) -> ProxyState:
    """The app's state, from any request."""
    state: ProxyState = request.app.state.suture
    return state


def context_of(request: Request) -> RequestContext:
    """This request's context, made by the request-context middleware."""
    ctx: RequestContext = request.scope["suture"]
    return ctx


def watch_client(request: Request, state: ProxyState | None = None) -> ClientWatch:
    """This request's :class:`ClientWatch`, started on first call: call it once the body is read."""
    ctx = context_of(request)
    if ctx.watch is None:
        ctx.watch = ClientWatch(
            request.receive,
            send_timeout=(state or state_of(request)).settings.timeouts.client_send,
            abort=request.scope.get(ABORT_SCOPE_KEY),
            on_disconnect=request.scope.get(ON_DISCONNECT_SCOPE_KEY),
        )
    return ctx.watch
