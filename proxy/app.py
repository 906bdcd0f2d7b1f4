"""``build_app(settings)``: the Starlette app, its lifespan (the upstream clients) and middleware."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import provider_table
from .browsers import BrowserGuard, Refusal
from .capture import Capturer, CaptureStore
from .exchange import Exchange, ProxyState, request_id_of
from .http1 import Proxy
from .labels import ModelLabels
from .learnt import LearntProfiles, ProfilesFileError
from .metrics import Metrics
from .observers.captures import CaptureKeeper
from .observers.log import ExchangeLog
from .observers.metrics import ExchangeMetrics
from .redaction import Secrets
from .routes.endpoints import fixed_paths, starlette_routes
from .routes.errors import error_response, exception_handlers, internal_error, provider_of
from .routes.model_routes import build_router
from .settings import BedrockSettings, ConfigError, RetrySettings, Settings
from .upstreams import via_litellm
from .upstreams.native import Retries, Signer, Timeouts, Upstream, upstream_ssl_context

_YOUNG_GENERATION_THRESHOLD = 10_000  # CPython's default is 700: see the lifespan
_STAMPED = frozenset({b"x-suture-request-id", b"x-suture-repairs", b"x-suture-rules"})


def build_app(settings: Settings) -> Starlette:
    """The proxy as an ASGI app. Settings and policy are fixed here; the request path only reads them."""
    state = ProxyState(
        settings=settings,
        policy=settings.policy.to_policy(),
        metrics=Metrics(),
        browsers=BrowserGuard(settings.host, settings.allowed_hosts, settings.allowed_origins),
    )
    state.router = build_router(settings)
    routed_keys = [t.api_key.get_secret_value() for t in state.router.targets if t.api_key is not None]
    state.secrets = Secrets([*settings.secret_values(), *routed_keys])
    signers = {p.name: _aws_signer(p, settings) for p in provider_table.providers() if p.upstream_key == "sigv4"}
    try:
        tls = upstream_ssl_context(settings.upstream_ca_file)
    except ValueError as exc:
        raise ConfigError(f"upstream_ca_file: {exc}") from None
    proxy = Proxy.from_url(settings.upstream_proxy.get_secret_value()) if settings.upstream_proxy else None
    if settings.capture.dir is not None:
        state.capture = Capturer(CaptureStore(settings.capture.dir, settings.capture.max_bytes))
    if settings.learning.enabled:
        state.learnt = learnt_profiles(settings)
    page = _observe(state)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        t = settings.timeouts
        timeouts = Timeouts(connect=t.connect, read=t.read, write=t.write, pool=t.pool)
        for provider in provider_table.providers():
            name = provider.name
            state.upstreams[name] = Upstream(
                name,
                settings.route(name).upstream,
                timeouts=timeouts,
                max_connections=settings.max_connections,
                retries=_retries(settings.route(name).retries),
                sign=signers.get(name),
                ssl_context=tls,
                proxy=proxy,
            )
        for target in state.router.targets:
            if target.base_url is not None:
                state.named_upstreams[target.name] = Upstream(
                    target.name,
                    target.base_url,
                    timeouts=timeouts,
                    max_connections=settings.max_connections,
                    ssl_context=tls,
                    proxy=proxy,
                )
        for upstream in [*state.upstreams.values(), *state.named_upstreams.values()]:
            state.metrics.watch_connections(upstream.name, upstream.pool)
        if any(target.protocol == "litellm" for target in state.router.targets):
            # Seconds of import: paid here, before readiness, not by the first routed request.
            await via_litellm.load_litellm()
        # Everything made at start-up lives as long as the process: frozen out of the collector,
        # it is no longer rescanned by each full collection. A broken 1,000-message transcript's
        # repair allocates enough to trigger those; in-process its p99 fell from 27.6 to 5.3 ms.
        gc.collect()
        gc.freeze()
        # The youngest generation is collected when allocations outrun frees by its threshold.
        # CPython's 700 is crossed every few requests while 64 are in flight, and each collection
        # rescans what those requests still hold, though a request leaves no cycles behind (only
        # error paths do, some 25 objects each): 5% of the instructions of a 10-message request
        # at concurrency 64 (callgrind, 581k to 549k per request), 180 µs of each 2 MB request.
        # At 10,000 no collection runs in steady traffic; one that runs scans at most some 10,000
        # young objects (4 ms here), and the error paths' cycles are still freed every few
        # hundred failed requests.
        gc.set_threshold(_YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])
        state.loop = asyncio.get_running_loop()
        state.ready = True
        via_litellm.log_redaction.registries.append(state.secrets)
        try:
            capturing = state.capture.running() if state.capture else contextlib.nullcontext()
            async with capturing, state.metrics.publishing():
                yield
        finally:
            state.ready = False
            for upstream in [*state.upstreams.values(), *state.named_upstreams.values()]:
                await upstream.aclose()
            await via_litellm.aclose()
            if state.tracer is not None:
                state.tracer.shutdown()  # sends the spans still batched
            via_litellm.log_redaction.registries.remove(state.secrets)

    served = [*page, *starlette_routes(settings)]
    state.fixed_paths = fixed_paths(served)
    app = SutureApp(
        routes=served,
        lifespan=lifespan,
        middleware=[Middleware(RequestContextMiddleware, state=state)],
        exception_handlers=exception_handlers(),
        state=state,
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

    def __init__(self, *, state: ProxyState, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Read by Suture's server protocol (proxy/server_protocol.py) for each new connection.
        self.client_read_timeout = state.settings.timeouts.client_read
        self._direct: dict[str, Callable[[Request], Awaitable[ASGIApp]]] = {
            route.path: route.endpoint
            for route in self.router.routes
            if isinstance(route, Route) and route.methods == {"POST"} and "{" not in route.path
        }
        self._direct_app = RequestContextMiddleware(self._call_endpoint, state)

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
            if not scope["suture"].answer.started:
                error = await internal_error(request, exc)
                # Stamped by the context middleware on this path.
                del error.headers["x-request-id"]
                del error.headers["x-suture-request-id"]
                await error(scope, receive, send)
            raise


def _retries(retries: RetrySettings) -> Retries:
    return Retries(attempts=retries.attempts, when=tuple(retries.when), backoff=retries.backoff)


def _observe(state: ProxyState) -> list[BaseRoute]:
    """Register the observers of finished exchanges, in the order they are told: metrics, log lines,
    capture store, the page's feed, the tracer. Returns the page's routes (none when it is off)."""
    settings = state.settings
    labels = ModelLabels(rule.match for rule in settings.routes)
    state.observers += [ExchangeMetrics(state.metrics, labels), ExchangeLog()]
    if state.capture is not None:
        state.observers.append(CaptureKeeper(state.capture))
    page: list[BaseRoute] = []
    if settings.ui.enabled:
        from .ui.live import page_for

        feed, mount = page_for(settings, state.learnt)
        state.page_keeps_bodies = feed.ring.keep_bodies
        state.observers.append(feed)
        page.append(mount)
    if settings.otel.enabled:
        try:
            from .tracing import ExchangeTracer  # OpenTelemetry is imported only when tracing is on
        except ImportError:
            raise ConfigError("otel.enabled needs OpenTelemetry: pip install 'suture[otel]'") from None
        tracer = ExchangeTracer.from_environment()
        state.tracer = tracer
        state.observers.append(tracer)
    return page


def learnt_profiles(settings: Settings) -> LearntProfiles:
    """The learnt fixes, read from their file (``learning.file``, else the capture directory's)."""
    path = settings.learning.path(settings.capture.dir)
    try:
        return LearntProfiles(path, expire_seconds=settings.learning.expire_days * 86400)
    except ProfilesFileError as exc:
        raise ConfigError(f"learning: {exc} (fix or remove the file; `suture profiles` reads it too)") from None


class RequestContextMiddleware:
    """Pure ASGI: gives each request its :class:`Exchange`, stamps the response headers, and has
    the exchange write its log line, metrics and capture once the last byte is out (streams included)."""

    def __init__(self, app: ASGIApp, state: ProxyState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.state.browsers.check(scope["headers"]) if scope["type"] in ("http", "websocket") else None
        if scope["type"] != "http":
            if refusal is not None:
                await _refuse_socket(self.state, scope, receive, send, refusal)
            else:
                await self.app(scope, receive, send)
            return
        exchange = Exchange(self.state, scope, request_id_of(scope))
        scope["suture"] = exchange
        app = self.app if refusal is None else _refused(exchange, refusal)

        async def stamped_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer = exchange.answer
                answer.status = message["status"]
                answer.started = True
                if answer.stamped:  # a relay stamps its own headers, as it builds them
                    await send(message)
                    return
                headers = []
                named = False
                for name, value in message.get("headers", []):
                    lowered = name.lower()
                    if lowered not in _STAMPED:
                        headers.append((name, value))
                        named = named or lowered == b"x-request-id"
                stamp = exchange.stamp()
                if not named:
                    # An answer of Suture's own: its id is the one an SDK's error can show.
                    stamp.append((b"x-request-id", exchange.request_id.encode()))
                message = {**message, "headers": headers + stamp}
            await send(message)

        try:
            await app(scope, receive, stamped_send)
        finally:
            exchange.finish()


async def _refuse_socket(state: ProxyState, scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
    """A WebSocket handshake the browser checks refuse: the HTTP answer a request would get, and its
    access line (a close before the handshake would be a bare 403, logged nowhere)."""
    exchange = Exchange(state, {**scope, "method": "GET"}, request_id_of(scope))
    exchange.answer.outcome = "refused_browser" if refusal.status == 403 else "refused_host"
    exchange.answer.status = refusal.status
    try:
        if "websocket.http.response" in scope.get("extensions", {}):
            response = error_response(provider_of(HTTPConnection(scope)), refusal.status, refusal.message)
            headers = [*response.raw_headers, *exchange.stamp(), (b"x-request-id", exchange.request_id.encode())]
            await send({"type": "websocket.http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": response.body})
        else:
            exchange.answer.status = 403  # what a server without the extension answers a close with
            await send({"type": "websocket.close", "code": 1008})
    finally:
        exchange.finish()


def _refused(exchange: Exchange, refusal: Refusal) -> ASGIApp:
    """The answer to a request the browser checks refuse, before anything of it is read."""
    exchange.answer.outcome = "refused_browser" if refusal.status == 403 else "refused_host"

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(provider_of(Request(scope)), refusal.status, refusal.message)
        response.headers["connection"] = "close"  # its body, if any, is never read
        await response(scope, receive, send)

    return answer


def _aws_signer(provider: provider_table.Provider, settings: Settings) -> Signer | None:
    """Suture's AWS credentials for a provider it signs for, found once at start-up; raises ConfigError."""
    cfg = settings.route(provider.name)
    assert isinstance(cfg, BedrockSettings)
    if not cfg.enabled:
        return None
    try:
        from .aws import NoCredentialsError, SigV4Signer
    except ImportError:
        raise ConfigError(f"{provider.name}.enabled needs botocore: pip install 'suture[bedrock]'") from None
    try:
        return SigV4Signer.from_default_chain(cfg.region)
    except NoCredentialsError as exc:
        raise ConfigError(str(exc)) from None
