"""Together AI's one public refusal of a transcript, made by the emulator's ``/together/v1`` route.

Together answered an agent loop whose tool messages carried ``name`` beside ``tool_call_id`` with
HTTP 400 ``{"message": "Input validation error", "type_": "invalid_request_error"}``, and the same
loop without ``name`` with an answer (mozilla-ai/any-llm#714). The refusal names nothing, and its
cause is inferred from that report: Suture's validator does not check it and no rule is bound for
it, so this route is where Suture meets it and must repair it from the refusal alone.
"""

from __future__ import annotations

from typing import Any

INPUT_VALIDATION_ERROR = "Input validation error"


def refusal(body: dict[str, Any]) -> str | None:
    """The refusal's text for a body with a tool message that carries ``name``, else None."""
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get("role") == "tool" and "name" in message:
            return INPUT_VALIDATION_ERROR
    return None
