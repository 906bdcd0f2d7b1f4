"""The entry point: ``sanitize(body, api=...)``."""

from __future__ import annotations

from typing import Any

from ._errors import SanitizeError, UnknownAPIError
from ._model import SanitizeResult
from ._policy import Policy

APIS = ("openai-chat", "anthropic-messages")


def sanitize(body: Any, *, api: str, policy: Policy | None = None, provider: str | None = None) -> SanitizeResult:
    """Repair ``body`` so the provider accepts its transcript. (Placeholder until the core lands.)"""
    if api not in APIS:
        raise UnknownAPIError(f"unknown api {api!r}; known: {', '.join(APIS)}")
    if not isinstance(body, dict):
        raise SanitizeError("", f"the request body must be a JSON object, not {type(body).__name__}")
    return SanitizeResult(body=body, repairs=[])
