from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from ._system_messages import settle


class StrandedSystemMessage(Rule):
    """
    What it repairs:
        A system message inside ``messages`` that stood where the model takes it (Claude Opus 4.8
        and later: after a user message, before an assistant message or last), until another
        repair removed the message beside it: an empty or blank user message before it, an
        empty assistant message after it, a turn of results that answer nothing. It now follows
        an assistant message, or precedes a user message, or opens the conversation.

    Why:
        Anthropic: "role 'system' must follow a 'user' message or an 'assistant' message ending
        in a server tool result" (it must also be last or followed by an assistant message:
        platform.claude.com, Mid-conversation system messages).

    Example:
        Before (claude-opus-4-8): user "hi" / assistant "ok" / user "" / system "Be brief." /
                assistant "Sure" / user "go"
        After:  user "hi" / assistant "ok" / user "<system-reminder>\\nBe brief.\\n</system-reminder>" /
                assistant "Sure" / user "go"
                (empty-message removed the empty user message, leaving the system message after
                an assistant message)

    Safety:
        As for system-role-message (AN014), which it completes: the texts go into the user turn
        the message stood by, wrapped as reminders (into the top-level system field when nothing
        is left before them); nothing is dropped. It runs after every rule that removes
        messages, and changes nothing where no repair did.
    """

    code = "AN021"
    name = "stranded-system-message"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.system-placement",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        settle(self, transcript, ctx, stranded=True)
