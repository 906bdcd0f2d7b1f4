"""The endpoints, thin: Starlette's routes built from the route table, and the few of Suture's own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from ..client_watch import ClientGone
from ..settings import Settings
from . import table
from .context import state_of
from .credentials import check_client_key
from .errors import error_response
from .exchange import Exchange
from .send_native import forward, raw_path
from .transcripts import proxy_transcript

# Both SDKs list models at GET /v1/models, each under its own base URL convention.
_MODELS_PATHS = {"openai": "/models", "anthropic": "/v1/models"}


def transcript_endpoint(route: table.Route, settings: Settings) -> Callable[[Request], Awaitable[ASGIApp]]:
    """The endpoint of one row of the route table."""
    cfg = settings.route(route.provider.name)
    served = cfg.serves()
    limit = settings.max_body_bytes

    async def endpoint(request: Request) -> ASGIApp:
        exchange = Exchange.of(request)
        exchange.route, exchange.provider = route, route.provider
        if not served:
            return error_response(
                route.provider,
                404,
                f"the {route.provider.name} route is not enabled on this Suture ({route.provider.name}.enabled)",
            )
        model = None
        if route.model_of_path is not None:
            try:
                model = route.model_of_path(request.path_params)
            except table.NotServed as exc:
                return error_response(route.provider, 404, str(exc))
        # Templated routes forward the path as the client sent it (raw, so a Bedrock model id's
        # ':' stays %3A as boto3 escaped it: the path is part of the signature).
        upstream_path = route.upstream_path if route.upstream_path is not None else raw_path(request)
        provider = route.provider
        denied = check_client_key(request, provider, cfg)
        if denied is not None:
            return denied
        content_type = request.headers.get("content-type")
        if content_type is not None and not _is_json(content_type):
            return error_response(
                provider,
                415,
                f"the request body must be JSON (Content-Type: application/json), not {content_type[:100]}",
            )
        try:
            raw = await _read_body(request, limit)
        except _BodyTooLarge:
            return error_response(provider, 413, f"the request body is larger than Suture's limit of {limit} bytes")
        except ClientDisconnect:
            exchange.outcome = "client_disconnected"
            return Response(status_code=400)
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
    # No Content-Type at all is taken as JSON; any other type is a mistake (curl -d sends a form type).
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _BodyTooLarge
    return bytes(body)


async def models(request: Request) -> ASGIApp:
    # Both SDKs call GET /v1/models; only Anthropic's sends its own headers.
    headers = request.headers
    name = "anthropic" if "x-api-key" in headers or "anthropic-version" in headers else "openai"
    provider = table.provider(name)
    cfg = state_of(request).settings.route(name)
    denied = check_client_key(request, provider, cfg)
    if denied is not None:
        return denied
    exchange = Exchange.of(request)
    exchange.provider = provider
    return await forward(exchange, cfg, _MODELS_PATHS[name], content=None)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = state_of(request)
    ready = state.ready and bool(state.upstreams) and not any(u.closed for u in state.upstreams.values())
    return JSONResponse({"status": "ready" if ready else "not ready"}, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    state = state_of(request)
    return Response(state.metrics.render(), headers={"content-type": state.metrics.content_type})


def routes(settings: Settings, rows: tuple[table.Route, ...] | None = None) -> list[BaseRoute]:
    """Starlette's routes: one per path of each row of ``rows`` (the route table's by default), and Suture's own."""
    served: list[BaseRoute] = [
        Route(path, transcript_endpoint(row, settings), methods=["POST"])
        for row in rows or table.ROUTES
        for path in row.paths
    ]
    return [
        *served,
        Route("/v1/models", models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]


def fixed_paths(served: list[BaseRoute]) -> frozenset[str]:
    """The paths of ``served`` without a template: labelled by themselves in the metrics."""
    return frozenset(r.path for r in served if isinstance(r, Route) and "{" not in r.path)
