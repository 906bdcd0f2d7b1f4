"""Errors Suture answers itself, in the error shape of the provider the client speaks."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response

from sanitizer.validation import error_envelope

from .. import provider_table


def error_response(provider: provider_table.Provider, status: int, message: str) -> Response:
    """A JSON error in the shape ``provider``'s clients expect (:attr:`~provider_table.Provider.errors`).

    The error's type follows ``status`` in the provider's vocabulary (Anthropic's
    ``authentication_error`` for 401, OpenAI's ``invalid_api_key`` code...).
    """
    status, body, headers = error_envelope(provider.errors, provider.core_name, message, status=status)
    return Response(orjson.dumps(body), status_code=status, headers=headers, media_type="application/json")


def provider_of(request: HTTPConnection) -> provider_table.Provider:
    """The provider a request that reached no endpoint speaks, judged by its path and headers."""
    path, headers = request.url.path, request.headers
    known = provider_table.providers()
    for provider in known:
        if any(path.startswith(sign) if sign[0] == "/" else sign in headers for sign in provider.recognised_by):
            return provider
    return known[0]


async def _http_error(request: Request, exc: Exception) -> Response:
    # Starlette's router raises these for an unknown path (404) or method (405).
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}; use {allowed}"
    else:
        message = f"Suture serves no endpoint at {request.method} {request.url.path}"
    response = error_response(provider_of(request), exc.status_code, message)
    response.headers.update(exc.headers or {})
    return response


async def internal_error(request: Request, exc: Exception) -> Response:
    # Starlette's outermost middleware answers here, outside the one that stamps the request id.
    response = error_response(provider_of(request), 500, "Suture failed on this request; it is in Suture's log")
    ctx = request.scope.get("suture")
    if ctx is not None:
        response.headers["x-request-id"] = ctx.request_id
        response.headers["x-suture-request-id"] = ctx.request_id
    # uvicorn closes the connection after an unhandled error: say so, or a client reusing it
    # for its next request meets a reset.
    response.headers["connection"] = "close"
    return response


def exception_handlers() -> dict[Any, Any]:
    """Starlette's errors in the provider's shape instead of plain text."""
    return {404: _http_error, 405: _http_error, Exception: internal_error}
