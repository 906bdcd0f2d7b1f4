from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Transcript
from ._base import Context, Rule


class ToolResultNotFirst(Rule):
    """
    What it repairs:
        A user message in which a ``tool_result`` block comes after text or another block:
        a harness that puts "[Request interrupted by user for tool use]" or a
        ``<system-reminder>`` in front of the results.

    Why:
        Anthropic requires the results first and rejects the request with the same error as a
        missing result: "messages.1: `tool_use` ids were found without `tool_result` blocks
        immediately after: toolu_1. Each `tool_use` block must have a corresponding
        `tool_result` block in the next message."

    Example:
        Before: user [text "[Request interrupted by user for tool use]", tool_result toolu_1]
        After:  user [tool_result toolu_1, text "[Request interrupted by user for tool use]"]

    Safety:
        Reorders blocks inside the message only: results first, everything else after them
        in its original order. Nothing is dropped.
    """

    code = "AN001"
    name = "tool-result-not-first"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A1",)
    apis = frozenset({"anthropic-messages"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            # One part is in order whatever it is: most messages, asked on every turn.
            if entry.role != "user" or len(entry.parts) < 2:
                continue
            kinds = [p.kind == RESULT for p in entry.parts]
            if kinds == sorted(kinds, reverse=True):
                continue
            results = [p for p in entry.parts if p.kind == RESULT]
            entry.parts = results + [p for p in entry.parts if p.kind != RESULT]
            entry.dirty = True
            for part in results:
                ctx.report(
                    self,
                    "hoisted",
                    entry,
                    part.call_id,
                    "moved the tool_result block before the message's other blocks",
                )
