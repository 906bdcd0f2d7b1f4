from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, Transcript
from ._base import Context, Rule


class DuplicateToolCall(Rule):
    """
    What it repairs:
        The same tool-call id twice inside one assistant message (providers that repeat a
        call in one turn; streamed deltas accumulated twice).

    Why:
        Anthropic: "messages.1.content.1: `tool_use` ids must be unique"
        OpenAI-compatible servers reject the turn or pair the one result with both calls.

    Example:
        Before: assistant calls ls (call_1) and pwd (call_1) / result call_1
        After:  assistant calls ls (call_1) / result call_1

    Safety:
        Keeps the first call and drops the later one(s); the dropped call's name and
        arguments are kept in the repair record.
    """

    code = "TP007"
    name = "duplicate-tool-call"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A11",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        removals = []
        for entry in transcript.entries:
            if len(entry.parts) < 2:
                continue  # one part cannot repeat itself: most messages, asked on every turn
            seen: set[str | None] = set()
            doomed = []
            for part in entry.parts:
                if part.kind != CALL:
                    continue
                if part.call_id in seen:
                    doomed.append(part)
                    ctx.report(
                        self,
                        "dropped",
                        entry,
                        part.call_id,
                        f"dropped a second call with the same id in one message: {part.name!r} "
                        f"with arguments {ctx.describe(part)}",
                    )
                seen.add(part.call_id)
            if doomed:
                removals.append((entry, ctx.dialect.droppable(entry, doomed)))
        transcript.remove_parts(removals)
