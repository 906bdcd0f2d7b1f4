"""``build_app(settings)``: the Starlette app, its lifespan (the upstream clients) and middleware."""

from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import gateway
from .capture import Capturer, CaptureStore
from .context import ProxyState, RequestContext
from .errors import exception_handlers, internal_error
from .http1 import Proxy
from .logs import access_log, log
from .metrics import Metrics
from .redaction import secrets_of
from .routes import ROUTE_PATHS, routes
from .routing import build_router
from .settings import ROUTE_NAMES, ConfigError, Settings
from .upstream import Signer, Upstream, upstream_ssl_context

_CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# A random prefix per process and a counter: unique like uuid4, without a urandom syscall on
# every request (uuid4 was 5% of the proxy's CPU in a py-spy profile).
_ID_PREFIX = uuid.uuid4().hex[:16]
_ID_COUNTER = itertools.count()


def build_app(settings: Settings) -> Starlette:
    """The proxy as an ASGI app. Settings and policy are fixed here; the request path only reads them."""
    state = ProxyState(settings=settings, policy=settings.policy.to_policy(), metrics=Metrics())
    state.router = build_router(settings)
    state.secrets = secrets_of(settings, state.router)
    signer = _bedrock_signer(settings)
    try:
        tls = upstream_ssl_context(settings.upstream_ca_file)
    except ValueError as exc:
        raise ConfigError(f"upstream_ca_file: {exc}") from None
    proxy = Proxy.from_url(settings.upstream_proxy.get_secret_value()) if settings.upstream_proxy else None
    if settings.capture.dir is not None:
        state.capture = Capturer(CaptureStore(settings.capture.dir, settings.capture.max_bytes))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for name in ROUTE_NAMES:
            state.upstreams[name] = Upstream(
                name,
                settings.route(name).upstream,
                timeouts=settings.timeouts,
                max_connections=settings.max_connections,
                retries=settings.route(name).retries,
                sign=signer if name == "bedrock" else None,
                ssl_context=tls,
                proxy=proxy,
            )
        for target in state.router.targets:
            if target.base_url is not None:
                state.named_upstreams[target.name] = Upstream(
                    target.name,
                    target.base_url,
                    timeouts=settings.timeouts,
                    max_connections=settings.max_connections,
                    ssl_context=tls,
                    proxy=proxy,
                )
        for upstream in [*state.upstreams.values(), *state.named_upstreams.values()]:
            state.metrics.watch_connections(upstream.name, upstream.pool)
        # Everything made at start-up lives as long as the process: frozen out of the collector,
        # it is no longer rescanned by each full collection. A broken 1,000-message transcript's
        # repair allocates enough to trigger those; in-process its p99 fell from 27.6 to 5.3 ms.
        gc.collect()
        gc.freeze()
        state.ready = True
        try:
            async with state.capture.running() if state.capture else contextlib.nullcontext():
                yield
        finally:
            state.ready = False
            for upstream in [*state.upstreams.values(), *state.named_upstreams.values()]:
                await upstream.aclose()
            await gateway.aclose()

    app = SutureApp(
        routes=routes(),
        lifespan=lifespan,
        middleware=[Middleware(RequestContextMiddleware, metrics=state.metrics)],
        exception_handlers=exception_handlers(),
        metrics=state.metrics,
    )
    app.state.suture = state
    return app


class SutureApp(Starlette):
    """Starlette, except that a POST to an exact endpoint path (the transcript routes: the hot
    path) calls its endpoint from here, under the same request-context middleware.

    Starlette's router and its two exception middlewares, each wrapping ``send`` once more, cost
    about a tenth of the proxy's CPU per request (bench/run.py under py-spy). Everything else
    (templated paths, GET routes, 404s and 405s, lifespan) goes through Starlette as usual.
    """

    def __init__(self, *, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._direct: dict[str, Callable[[Request], Awaitable[ASGIApp]]] = {
            route.path: route.endpoint
            for route in self.router.routes
            if isinstance(route, Route) and route.methods == {"POST"} and "{" not in route.path
        }
        self._direct_app = RequestContextMiddleware(self._call_endpoint, metrics)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] in self._direct:
            scope["app"] = self
            await self._direct_app(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def _call_endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            response = await self._direct[scope["path"]](request)
            await response(scope, receive, send)
        except Exception as exc:
            # As Starlette's ServerErrorMiddleware would: a provider-shaped 500 if nothing was sent
            # yet, then the exception goes on to uvicorn, which logs it and closes the connection.
            if not scope["suture"].response_started:
                error = await internal_error(request, exc)
                del error.headers["x-request-id"]  # stamped by the context middleware on this path
                await error(scope, receive, send)
            raise


class RequestContextMiddleware:
    """Pure ASGI: gives each request an id and a context, stamps the response headers, and
    writes the access line and request metrics once the last byte is out (streams included)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ctx = RequestContext(request_id=_request_id(scope))
        scope["suture"] = ctx
        started = time.perf_counter()
        status = 500

        async def stamped_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                ctx.response_started = True
                headers = []
                for name, value in message.get("headers", []):
                    lowered = name.lower()
                    if lowered == b"x-request-id":
                        # The provider's own id (OpenAI's) stays available for support tickets.
                        headers.append((b"x-upstream-request-id", value))
                    elif lowered != b"x-suture-repairs":
                        headers.append((name, value))
                headers.append((b"x-request-id", ctx.request_id.encode()))
                headers.append((b"x-suture-repairs", str(ctx.repairs_applied).encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, stamped_send)
        finally:
            if ctx.watch is not None:
                ctx.watch.close()
            elapsed = time.perf_counter() - started
            path: str = scope["path"]
            matched = scope.get("route")
            # Templated routes (Gemini's, Bedrock's) are labelled by their pattern: a bounded set.
            route = path if path in ROUTE_PATHS else getattr(matched, "path", "other")
            self.metrics.requests.labels(route, scope["method"], str(status)).inc()
            self.metrics.request_seconds.labels(route).observe(elapsed)
            log(
                access_log,
                # Probes and scrapes arrive every few seconds: their lines would drown the traffic.
                logging.DEBUG if route in ("/healthz", "/readyz", "/metrics") else logging.INFO,
                "request",
                request_id=ctx.request_id,
                method=scope["method"],
                path=path,
                status=status,
                duration_ms=round(elapsed * 1000, 1),
                repairs=ctx.repairs_found,
                repairs_applied=ctx.repairs_applied,
                mode=ctx.mode,
                upstream_status=ctx.upstream_status,
                outcome=ctx.outcome,
            )


def _bedrock_signer(settings: Settings) -> Signer | None:
    """Suture's AWS credentials for the Bedrock route, found once at start-up; raises ConfigError."""
    if not settings.bedrock.enabled:
        return None
    try:
        from .aws import NoCredentialsError, SigV4Signer
    except ImportError:
        raise ConfigError("bedrock.enabled needs botocore: pip install 'suture[bedrock]'") from None
    try:
        return SigV4Signer.from_default_chain(settings.bedrock.region)
    except NoCredentialsError as exc:
        raise ConfigError(str(exc)) from None


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            candidate: str = value.decode("latin-1")
            if _CLIENT_REQUEST_ID.fullmatch(candidate):
                return candidate
            break
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"
