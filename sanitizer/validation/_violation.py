"""The record ``validate`` returns: one provider rule a request body breaks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Violation:
    """One rule the body breaks, and exactly what the provider would answer.

    ``rule`` is ``"<family>.<code>"`` after the rule catalogue (``anthropic.A1``, ``openai.O2``,
    ``mistral.M3``...). ``message`` is the provider's error text with real indexes and ids,
    ``body`` its full JSON error body (a list for Gemini's OpenAI-compatible endpoint), and
    ``headers`` the response headers that carry meaning (Bedrock's ``x-amzn-ErrorType``).
    ``message_index`` is the index, in the body as given, of the message or input item the
    error is about; ``None`` when it concerns the request as a whole.
    """

    rule: str
    status: int
    message: str
    body: dict[str, Any] | list[Any]
    message_index: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
