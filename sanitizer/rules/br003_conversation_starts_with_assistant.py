from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from .gm002_call_turn_without_user_turn import LEAD_IN_TEXT


class ConversationStartsWithAssistant(Rule):
    """
    What it repairs:
        A Converse conversation whose first message is the assistant's: a history cut to its
        last turns by a client that trims old messages, or one whose opening user turn a
        framework moved into the system prompt.

    Why:
        Bedrock: "A conversation must start with a user message. Try again with a conversation
        that starts with a user message."

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
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B8",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        if entries and entries[0].role == "assistant":
            ctx.report(
                self, "inserted", entries[0], None, "put a short user message before the first assistant message"
            )
            transcript.entries = [ctx.dialect.text_entry("user", LEAD_IN_TEXT), *entries]
