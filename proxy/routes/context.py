"""What the app holds for its lifetime, and what one request carries through the middleware."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import Request

from sanitizer import Policy

from ..browsers import BrowserGuard
from ..capture import Capturer
from ..labels import ModelLabels
from ..learnt import LearntProfiles
from ..metrics import Metrics
from ..redaction import Secrets
from ..settings import Settings
from ..ui.feed import Feed
from ..upstreams.native import Upstream
from .model_routes import Router

if TYPE_CHECKING:
    from ..tracing import ExchangeTracer


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
    ui: Feed | None = None
    """Set when the page is on (``ui.enabled``): every finished request is recorded in its ring."""

    @property
    def drafts(self) -> bool:
        """Whether requests keep a capture draft: for the capture directory, or for the page's bodies."""
        return self.capture is not None or (self.ui is not None and self.ui.ring.keep_bodies)

    model_labels: ModelLabels = field(default_factory=ModelLabels)
    """The ``model`` label of a model name (a bounded set)."""
    tracer: ExchangeTracer | None = None
    """Set when OpenTelemetry tracing is on (``otel.enabled``); None costs nothing per request."""
    learnt: LearntProfiles | None = None
    """The fixes learnt from repaired refusals, when ``learning.enabled``."""
    browsers: BrowserGuard = field(default_factory=lambda: BrowserGuard("127.0.0.1"))
    """The Host and Origin checks every request passes before anything of it is read."""


def state_of(request: Request) -> ProxyState:
    """The app's state, from any request."""
    state: ProxyState = request.app.state.suture
    return state
