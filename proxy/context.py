"""What the app holds for its lifetime, and what one request carries through the middleware."""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.requests import Request

from sanitizer import Policy

from .capture import Capturer
from .metrics import Metrics
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


def state_of(request: Request) -> ProxyState:
    """The app's state, from any request."""
    state: ProxyState = request.app.state.suture
    return state


def context_of(request: Request) -> RequestContext:
    """This request's context, made by the request-context middleware."""
    ctx: RequestContext = request.scope["suture"]
    return ctx
