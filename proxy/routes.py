"""The endpoints and their paths, thin: each hands its request to the transcript or native path."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from .context import state_of
from .credentials import check_client_key
from .errors import error_response
from .forwarding import forward, raw_path
from .settings import RouteName
from .transcripts import proxy_transcript

# Paths on the upstream, after its base URL. OpenAI's conventional base URL ends in /v1,
# Anthropic's does not (the SDKs' own conventions, so a base URL can be copied from either).
_UPSTREAM_PATHS: dict[str, dict[RouteName, str]] = {
    "chat": {"openai": "/chat/completions"},
    "responses": {"openai": "/responses"},
    "messages": {"anthropic": "/v1/messages"},
    "count_tokens": {"anthropic": "/v1/messages/count_tokens"},
    "models": {"openai": "/models", "anthropic": "/v1/models"},
}

ROUTE_PATHS = frozenset(
    {
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/v1/models",
        "/healthz",
        "/readyz",
        "/metrics",
    }
)


async def chat_completions(request: Request) -> ASGIApp:
    return await proxy_transcript(request, "openai", _UPSTREAM_PATHS["chat"]["openai"], routed=True)


async def responses(request: Request) -> ASGIApp:
    return await proxy_transcript(
        request, "openai", _UPSTREAM_PATHS["responses"]["openai"], api="openai-responses", routed=True
    )


# Gemini names the model and the method in one path segment: /v1beta/models/{model}:{method}
# (or /v1/...).
GEMINI_METHODS = frozenset({"generateContent", "streamGenerateContent"})
# Model ids are checked (decoded) before the raw path is appended to the upstream's URL, so no
# '..' or '/' can walk the request to another upstream path.
_GEMINI_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_BEDROCK_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,2047}")


async def gemini_models(request: Request) -> ASGIApp:
    model, _, method = request.path_params["rest"].rpartition(":")
    if method not in GEMINI_METHODS or not _GEMINI_MODEL.fullmatch(model):
        return error_response(
            "gemini", 404, "Suture serves models/{model}:generateContent and :streamGenerateContent only"
        )
    # The path as the client sent it (Gemini's own paths), after the upstream's bare host. The
    # model is named here, not in the body; some repairs depend on it (Gemini 3's thought signatures).
    return await proxy_transcript(request, "gemini", raw_path(request), model=model)


async def bedrock_converse(request: Request) -> ASGIApp:
    if not state_of(request).settings.bedrock.enabled:
        return error_response("bedrock", 404, "the Bedrock route is not enabled on this Suture (bedrock.enabled)")
    model_id: str = request.path_params["model_id"]
    if not _BEDROCK_MODEL.fullmatch(model_id) or ".." in model_id.split("/"):
        return error_response("bedrock", 404, "not a Bedrock model id")
    # Raw, so a model id's ':' stays %3A as boto3 escaped it: the path is part of the signature.
    return await proxy_transcript(request, "bedrock", raw_path(request))


async def messages(request: Request) -> ASGIApp:
    return await proxy_transcript(request, "anthropic", _UPSTREAM_PATHS["messages"]["anthropic"], routed=True)


async def count_tokens(request: Request) -> ASGIApp:
    return await proxy_transcript(request, "anthropic", _UPSTREAM_PATHS["count_tokens"]["anthropic"])


async def models(request: Request) -> ASGIApp:
    # Both SDKs call GET /v1/models; only Anthropic's sends its own headers.
    headers = request.headers
    route: RouteName = "anthropic" if "x-api-key" in headers or "anthropic-version" in headers else "openai"
    denied = check_client_key(request, route)
    if denied is not None:
        return denied
    return await forward(request, route, _UPSTREAM_PATHS["models"][route], content=None)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = state_of(request)
    ready = state.ready and bool(state.upstreams) and not any(u.closed for u in state.upstreams.values())
    return JSONResponse({"status": "ready" if ready else "not ready"}, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    state = state_of(request)
    return Response(state.metrics.render(), headers={"content-type": state.metrics.content_type})


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        # google-genai calls /v1 by default, /v1beta when asked (and the REST docs use v1beta).
        Route("/v1/models/{rest:path}", gemini_models, methods=["POST"]),
        Route("/v1beta/models/{rest:path}", gemini_models, methods=["POST"]),
        Route("/model/{model_id:path}/converse", bedrock_converse, methods=["POST"]),
        Route("/model/{model_id:path}/converse-stream", bedrock_converse, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
