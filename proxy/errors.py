"""Errors Suture answers itself, in the error shape of the provider the client speaks."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from .settings import RouteName

try:
    from sanitizer.validation import error_envelope
except ImportError:  # pragma: no cover - the validator lands concurrently; same contract

    def error_envelope(  # type: ignore[misc]
        api: str, provider: str, message: str, *, status: int = 400, kind: str = "invalid_request_error"
    ) -> tuple[int, Any, dict[str, str]]:
        body: dict[str, Any]
        if provider == "anthropic":
            body = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        return status, body, {"content-type": "application/json"}


API_OF_ROUTE: dict[RouteName, str] = {"openai": "openai-chat", "anthropic": "anthropic-messages"}

# The provider's own error type for each status Suture can answer with.
_KINDS: dict[RouteName, dict[int, str]] = {
    "openai": {
        400: "invalid_request_error",
        401: "invalid_request_error",
        413: "invalid_request_error",
        502: "server_error",
        504: "server_error",
    },
    "anthropic": {
        400: "invalid_request_error",
        401: "authentication_error",
        413: "request_too_large",
        502: "api_error",
        504: "timeout_error",
    },
}


def error_response(route: RouteName, status: int, message: str) -> Response:
    """A provider-shaped JSON error for ``route`` ("openai" or "anthropic")."""
    kind = _KINDS[route].get(status, "api_error" if route == "anthropic" else "server_error")
    status, body, headers = error_envelope(API_OF_ROUTE[route], route, message, status=status, kind=kind)
    if isinstance(body, bytes | bytearray):
        content = bytes(body)
    elif isinstance(body, str):
        content = body.encode()
    else:
        content = orjson.dumps(body)
    headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    if not any(k.lower() == "content-type" for k in headers):
        headers["content-type"] = "application/json"
    return Response(content, status_code=status, headers=headers)
