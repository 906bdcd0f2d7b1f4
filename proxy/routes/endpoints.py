"""The endpoints, thin: Starlette's routes built from the route table, and the few of Suture's own."""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import ASGIApp

from .. import provider_table
from ..client_watch import ON_DISCONNECT_SCOPE_KEY, ClientGone
from ..exchange import Exchange, state_of
from ..settings import Settings
from .credentials import check_client_key
from .errors import error_response, provider_of
from .responses_socket import responses_socket
from .send_native import forward, raw_path
from .transcripts import proxy_transcript

_ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


def transcript_endpoint(route: provider_table.Route, settings: Settings) -> Callable[[Request], Awaitable[ASGIApp]]:
    """The endpoint of one row of the route table."""
    cfg = settings.route(route.provider.name)
    served = cfg.serves()
    limit = settings.max_body_bytes

    async def endpoint(request: Request) -> ASGIApp:
        exchange = Exchange.of(request)
        exchange.destination.route, exchange.destination.provider = route, route.provider
        if not served:
            return _not_enabled(route.provider)
        model = None
        if route.model_of_path is not None:
            try:
                model = route.model_of_path(request.path_params)
            except provider_table.NotServed as exc:
                if exc.other_method and settings.passthrough:
                    # Another method of the same API (Gemini's embedContent, countTokens...).
                    return await passthrough(request)
                return error_response(route.provider, 404, str(exc))
        # Templated routes forward the path as the client sent it (raw, so a Bedrock model id's
        # ':' stays %3A as boto3 escaped it: the path is part of the signature).
        upstream_path = route.upstream_path if route.upstream_path is not None else raw_path(request)
        provider = route.provider
        denied = check_client_key(request, provider, cfg)
        if denied is not None:
            return denied
        content_type = request.headers.get("content-type")
        if content_type is None or not _is_json(content_type):
            sent = "none" if content_type is None else content_type[:100]
            return error_response(
                provider, 415, f"the request body must be JSON (Content-Type: application/json), not {sent}"
            )
        raw = await _read_whole(exchange, request, provider, limit)
        if isinstance(raw, Response):
            return raw
        # From here on, a client that leaves cancels whatever its request is waiting on.
        exchange.watch_client()
        try:
            return await proxy_transcript(exchange, cfg, raw, upstream_path, model)
        except ClientGone as exc:
            return exchange.client_gone(exc.reason)

    endpoint.__name__ = route.name
    return endpoint


class _BodyTooLarge(Exception):
    pass


def _is_json(content_type: str) -> bool:
    # Every SDK says application/json. A body of no type (a browser's fetch of a Blob) or of a form
    # type (curl -d, an HTML form) is refused: those are what a web page can send with no preflight.
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def _read_whole(
    exchange: Exchange, request: Request, provider: provider_table.Provider, limit: int
) -> bytes | Response:
    """The request body, or the answer when it cannot be read: a 413 past ``limit``, or nobody's
    (the client left)."""
    try:
        return await _read_body(request, limit)
    except _BodyTooLarge:
        return error_response(provider, 413, f"the request body is larger than Suture's limit of {limit} bytes")
    except ClientDisconnect:
        exchange.answer.outcome = "client_disconnected"
        return Response(status_code=400)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    # Pieces joined once at the end (a body in one piece is not copied at all): growing a
    # bytearray copies a multi-megabyte transcript several times over, and bytes() once more.
    # Read from receive() itself: Starlette's stream() is an async generator around the same loop.
    pieces: list[bytes] = []
    size = 0
    receive = request.receive
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise _BodyTooLarge
            pieces.append(chunk)
        if not message.get("more_body", False):
            break
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


async def models(request: Request) -> ASGIApp:
    """``GET /v1/models``: both SDKs list models there, each under its own base URL convention.
    Served whether or not other requests pass through."""
    return await _relay_unrepaired(request, provider_of(request), None)


async def passthrough(request: Request) -> ASGIApp:
    """Any other request under a provider's API (embeddings, files, batches, a stored response...):
    relayed as it is to the upstream its path belongs to, with the same credentials and header
    policy as that provider's repaired routes."""
    exchange = Exchange.of(request)
    exchange.destination.label = "other"  # unknown paths share one label: a client cannot grow the metrics
    provider = provider_of(request)
    path = request.url.path
    hint = _base_url_hint(request)
    if hint is not None:
        exchange.destination.provider = provider
        return error_response(provider, 404, f"Suture serves no endpoint at {request.method} {path}: {hint}")
    passes = exchange.state.settings.passthrough and any(path.startswith(p) for p in provider.passthrough)
    if not passes:
        exchange.destination.provider = provider
        allowed = _methods_served(request)
        if allowed:
            # Starlette's own 405, rendered in the provider's shape by the app's handler.
            raise HTTPException(405, headers={"Allow": ", ".join(sorted(allowed))})
    if not any(path.startswith(prefix) for prefix in provider.passthrough):
        return error_response(provider, 404, f"Suture serves no endpoint at {request.method} {path}")
    if not passes:
        return error_response(
            provider,
            404,
            f"Suture repairs only its transcript endpoints and passes nothing else through (passthrough: false); "
            f"not {request.method} {path}",
        )
    return await _relay_unrepaired(request, provider, "passthrough")


def _base_url_hint(request: Request) -> str | None:
    """What is wrong with the client's base URL, when the path says so: an SDK's base URL with
    /v1 missing, or with /v1 once too often (Anthropic's SDKs add it themselves)."""
    path = request.url.path
    base = f"{request.url.scheme}://{request.headers.get('host', 'HOST')}"
    if path.startswith("/v1/v1/"):
        return (
            f"the base URL ends in /v1 once too often. Anthropic clients: base_url has no /v1 ({base}); "
            f"OpenAI clients: base_url ends in /v1 once ({base}/v1)"
        )
    if not path.startswith("/v1/") and any("/v1" + path in row.paths for row in provider_table.ROUTES):
        return f"OpenAI clients: base_url must end in /v1, e.g. {base}/v1"
    return None


def _not_enabled(provider: provider_table.Provider) -> Response:
    return error_response(
        provider, 404, f"the {provider.name} route is not enabled on this Suture ({provider.name}.enabled)"
    )


def _plain_path(raw: str) -> bool:
    """No empty, ``.`` or ``..`` segment, encoded or not: appended to the upstream's base URL, the
    path must stay under it (with Suture's own key, ``/v1/../admin`` would reach what the client
    was never given)."""
    segments = urllib.parse.unquote(raw).split("/")[1:]
    if segments and segments[-1] == "":
        segments.pop()  # a trailing slash
    return all(segment not in ("", ".", "..") and "\\" not in segment for segment in segments)


def _methods_served(request: Request) -> set[str]:
    """The methods Suture's own endpoints take at this request's path (none: no endpoint there)."""
    allowed: set[str] = set()
    for route in request.app.router.routes:
        if isinstance(route, Route) and route.endpoint is not passthrough and route.path_regex.match(request.url.path):
            allowed |= route.methods or set()
    return allowed


async def _relay_unrepaired(request: Request, provider: provider_table.Provider, label: str | None) -> ASGIApp:
    exchange = Exchange.of(request)
    exchange.destination.provider, exchange.destination.label = provider, label
    settings = exchange.state.settings
    cfg = settings.route(provider.name)
    if not cfg.serves():
        return _not_enabled(provider)
    denied = check_client_key(request, provider, cfg)
    if denied is not None:
        return denied
    path = raw_path(request)
    if not _plain_path(path):
        return error_response(provider, 404, f"Suture relays no path with empty, '.' or '..' segments: {path[:200]}")
    if provider.base_path and path.startswith(provider.base_path + "/"):
        path = path[len(provider.base_path) :]
    headers = request.headers
    declared = headers.get("content-length")
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    limit = settings.max_body_bytes
    content: bytes | None = None
    stream: AsyncIterator[bytes] | None = None
    if declared is None and not chunked:
        pass  # no body (a GET, a DELETE)
    elif (
        (declared is not None and declared.isdigit() and int(declared) <= limit)
        or provider.upstream_key == "sigv4"
        or ON_DISCONNECT_SCOPE_KEY not in request.scope
    ):
        # Held whole when small, when it must be signed (its hash is part of the signature), or
        # under another ASGI server, whose disconnect watch reads from the same receive().
        read = await _read_whole(exchange, request, provider, limit)
        if isinstance(read, Response):
            return read
        content = read
    else:
        # An upload too large to hold (a file, a batch): written upstream as it arrives.
        stream = request.stream()
    return await forward(exchange, cfg, path, content=content, stream=stream)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = state_of(request)
    ready = state.ready and bool(state.upstreams) and not any(u.closed for u in state.upstreams.values())
    return JSONResponse({"status": "ready" if ready else "not ready"}, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    state = state_of(request)
    return Response(state.metrics.render(), headers={"content-type": state.metrics.content_type})


def starlette_routes(settings: Settings, rows: tuple[provider_table.Route, ...] | None = None) -> list[BaseRoute]:
    """Starlette's routes: one per path of each row of ``rows`` (the route table's by default), the
    WebSocket of each Responses path, and Suture's own."""
    served: list[BaseRoute] = [
        Route(path, transcript_endpoint(row, settings), methods=["POST"])
        for row in rows or provider_table.ROUTES
        for path in row.paths
    ]
    # OpenAI's WebSocket mode: the Responses path's GET with Upgrade: websocket (responses_socket.py).
    served += [
        WebSocketRoute(path, responses_socket(row, settings))
        for row in rows or provider_table.ROUTES
        if row.api == "openai-responses"
        for path in row.paths
    ]
    return [
        *served,
        Route("/v1/models", models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        # Last: a path no row serves, or a method a row's path does not take, passes through.
        Route("/{path:path}", passthrough, methods=_ANY_METHOD, name="passthrough"),
    ]


def fixed_paths(served: list[BaseRoute]) -> frozenset[str]:
    """The paths of ``served`` without a template: labelled by themselves in the metrics."""
    return frozenset(r.path for r in served if isinstance(r, Route) and "{" not in r.path)
