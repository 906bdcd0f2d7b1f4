"""One module per wire format: how it stores calls, results, text and thinking."""

from __future__ import annotations

from ._base import Dialect
from .anthropic_messages import DIALECT as ANTHROPIC_MESSAGES
from .bedrock_converse import DIALECT as BEDROCK_CONVERSE
from .gemini import DIALECT as GEMINI
from .openai_chat import DIALECT as OPENAI_CHAT
from .openai_responses import DIALECT as OPENAI_RESPONSES

DIALECTS: dict[str, Dialect] = {
    d.api: d for d in (OPENAI_CHAT, ANTHROPIC_MESSAGES, OPENAI_RESPONSES, GEMINI, BEDROCK_CONVERSE)
}

__all__ = ["DIALECTS", "Dialect"]
