from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from .gm002_call_turn_without_user_turn import LEAD_IN_TEXT


class ConversationStartsWithAssistant(Rule):
    """
    What it repairs:
        A Converse conversation whose first message is the assistant's: a history cut to its
        last turns by a client that trims old messages, or one whose opening user turn a
        framework moved into the system prompt. The same in a Chat body a gateway converts
        for Bedrock, once its system messages are set aside, and in an Anthropic Messages body
        bound for Bedrock (InvokeModel).

    Why:
        Bedrock: "A conversation must start with a user message. Try again with a conversation
        that starts with a user message." and, for an Anthropic Messages body, "messages: first
        message must use the "user" role" (anthropics/anthropic-sdk-typescript#622, which
        Anthropic's own API no longer answers).

    Example:
        Before: assistant "Here is the plan." / user "go on"
        After:  user "(Conversation continues.)" / assistant "Here is the plan." / user "go on"

    Safety:
        Adds one short user message with fixed text at the start; nothing is changed or
        dropped. The text claims nothing and never changes, so prompt caches stay valid.
    """

    code = "BR003"
    name = "conversation-starts-with-assistant"
    apis = frozenset({"bedrock-converse"})
    also_for = frozenset({("openai-chat", "bedrock"), ("anthropic-messages", "bedrock")})
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B8", "anthropic.A10")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat or Anthropic body bound for Bedrock (in Converse it is one of the
        # format's own).
        if ctx.api == "bedrock-converse":
            return False
        first = next((m for m in body["messages"] if m.get("role") not in _SYSTEM), None)
        return first is None or first.get("role") != "assistant"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        # A Chat body's system messages become Converse's system field (an Anthropic body's went to
        # its own in system-role-message): the turn after them is first.
        first = next((i for i, e in enumerate(entries) if e.role not in _SYSTEM), None)
        if first is not None and entries[first].role == "assistant":
            ctx.report(
                self, "inserted", entries[first], None, "put a short user message before the first assistant message"
            )
            transcript.entries = [*entries[:first], ctx.dialect.text_entry("user", LEAD_IN_TEXT), *entries[first:]]


_SYSTEM = frozenset(("system", "developer"))
