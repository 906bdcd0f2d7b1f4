from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Entry, Transcript
from ._base import Context, Rule

LEAD_IN_TEXT = "(Conversation continues.)"
"""The user turn put before a call turn that has none. Not the policy's bridge text: that one
says tool results came in, which is false here, and it is an assistant turn. This one claims
nothing (the history may be cut, or the client may have sent no user turn at all) and never
changes, so provider prompt caches stay valid."""


class CallTurnWithoutUserTurn(Rule):
    """
    What it repairs:
        A model turn that calls a function with no user turn or function-response turn right
        before it: in practice a history that starts with the model's function call, left by
        a client that sent a slice of a longer history, or by a gateway that lifted the only
        message before the call (the system prompt) out of the turns.

    Why:
        Gemini: "Please ensure that function call turn comes immediately after a user turn
        or after a function response turn."

    Example:
        Before: model functionCall read_file / user functionResponse read_file / model "done"
                / user "next?"
        After:  user "(Conversation continues.)" / model functionCall read_file / user
                functionResponse read_file / model "done" / user "next?"

    Safety:
        Adds one short user turn with fixed text before each such call turn; nothing is
        changed or dropped. Runs after model turns in a row were merged, so a model turn before
        the call turn is never split from it.
    """

    code = "GM002"
    name = "call-turn-without-user-turn"
    apis = frozenset({"gemini"})
    also_for = frozenset({("openai-chat", "gemini")})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G1",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat body bound for Gemini (in Gemini's own format it is the format's).
        if ctx.api != "openai-chat":
            return False
        previous = None
        for m in body["messages"]:
            role = m.get("role")
            if role == "assistant" and m.get("tool_calls") and previous not in _ANSWERED_BY:
                return False
            if role not in _LIFTED:
                previous = role
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries: list[Entry] = []
        # The role of the last turn Gemini sees: a gateway lifts system and developer messages
        # of a Chat body into systemInstruction, so they are not turns.
        previous: str | None = None
        for entry in transcript.entries:
            if entry.role == "assistant" and entry.calls() and previous not in _ANSWERED_BY:
                ctx.report(self, "inserted", entry, None, "put a short user turn before this function-call turn")
                entries.append(ctx.dialect.text_entry("user", LEAD_IN_TEXT))
            entries.append(entry)
            if entry.role not in _LIFTED:
                previous = entry.role
        transcript.entries = entries


# What a call turn may follow: a user turn, or a turn of function responses (Chat: tool messages).
_ANSWERED_BY = frozenset({"user", "tool", "function"})
_LIFTED = frozenset({"system", "developer"})
