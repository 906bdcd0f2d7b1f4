from __future__ import annotations

from .._ir import Transcript
from ._base import Context, Rule


class EmptyMessage(Rule):
    """
    What it repairs:
        A message with no content: ``content: []`` or ``content: ""`` (an assistant turn stored
        after an empty end_turn, a user message with nothing typed, or one emptied by another
        repair).

    Why:
        Anthropic: "messages.2: all messages must have non-empty content except for the
        optional final assistant message"

    Example:
        Before: user "hi" / assistant [] / user "are you there?"
        After:  user "hi" / user "are you there?"   (Anthropic merges consecutive user turns)

    Safety:
        Removes only messages that hold nothing. The final assistant message is left alone,
        since the API allows it to be empty.
    """

    code = "AN003"
    name = "empty-message"
    apis = frozenset({"anthropic-messages"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        kept = []
        for index, entry in enumerate(entries):
            final_assistant = index == len(entries) - 1 and entry.role == "assistant"
            if entry.parts or final_assistant:
                kept.append(entry)
            else:
                ctx.report(self, "removed", entry, None, f"removed an empty {entry.role} message")
        transcript.entries = kept
