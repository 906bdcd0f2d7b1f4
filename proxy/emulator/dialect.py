"""What each wire format plugs into the emulator: how to read a request and write a reply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .script import Reply


@dataclass(frozen=True)
class Turn:
    """One request's scripted answer: the parsed body, the reply, and the token counts."""

    body: dict[str, Any]
    model: str
    reply: Reply
    input_tokens: int
    created: int


@dataclass(frozen=True)
class Dialect:
    api: str
    """The sanitizer's name for the wire format: ``openai-chat``, ``openai-responses``, ``anthropic-messages``."""
    provider: str
    """Whose error shapes and headers the route speaks: ``openai`` or ``anthropic``."""
    missing_field: Callable[[dict[str, Any]], str | None]
    """The provider's message for a missing required field, or None."""
    last_user_text: Callable[[dict[str, Any]], str | None]
    """The text of the final message when the user sent it, else None."""
    prompt: Callable[[dict[str, Any]], list[Any]]
    """The request fields whose words count as input tokens."""
    render: Callable[[Turn], dict[str, Any]]
    """The non-streaming JSON reply."""
    stream: Callable[[Turn], list[bytes]]
    """The streaming reply as SSE frames."""
    checks: str | None = None
    """The provider whose rules ``validate`` applies (``None``: the API's own), for a route that
    serves another provider's endpoint in this format (Gemini's OpenAI-compatible one)."""
