"""Errors Suture answers itself, in the error shape of the provider the client speaks."""

from __future__ import annotations

import orjson
from starlette.responses import Response

from sanitizer.validation import error_envelope

from .settings import RouteName

# Each route's wire format for errors Suture answers itself. The openai route also serves the
# Responses API (``openai-responses``), whose error envelope is the same as Chat's.
API_OF_ROUTE: dict[RouteName, str] = {
    "openai": "openai-chat",
    "anthropic": "anthropic-messages",
    "gemini": "gemini",
    "bedrock": "bedrock-converse",
}


def error_response(route: RouteName, status: int, message: str) -> Response:
    """A provider-shaped JSON error for ``route`` ("openai", "anthropic", "gemini" or "bedrock").

    The error's type follows ``status`` in the provider's vocabulary (Anthropic's
    ``authentication_error`` for 401, OpenAI's ``invalid_api_key`` code...).
    """
    status, body, headers = error_envelope(API_OF_ROUTE[route], route, message, status=status)
    return Response(orjson.dumps(body), status_code=status, headers=headers, media_type="application/json")
