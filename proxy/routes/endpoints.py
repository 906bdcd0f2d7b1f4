"""The endpoints, thin: Starlette's routes built from the route table, and the few of Suture's own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

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
        return await proxy_transcript(exchange, cfg, upstream_path, model)

    endpoint.__name__ = route.name
    return endpoint


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
