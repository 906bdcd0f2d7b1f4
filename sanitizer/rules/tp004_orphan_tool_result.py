from __future__ import annotations

from .._ir import CALL, RESULT, Transcript
from ._base import Context, Rule


class OrphanToolResult(Rule):
    """
    What it repairs:
        A tool result whose id answers no tool call anywhere in the transcript, typically left
        behind when history truncation or compaction cut the call away.

    Why:
        OpenAI: "Invalid parameter: messages with role 'tool' must be a response to a
        preceeding message with 'tool_calls'."
        Anthropic: "messages.0.content.0: unexpected `tool_use_id` found in `tool_result`
        blocks: toolu_0. Each `tool_result` block must have a corresponding `tool_use` block
        in the previous message."

    Example:
        Before: user "hi" / assistant "hello" / tool result for ghost_1 "x" / user "continue"
        After:  user "hi" / assistant "hello" / user "continue"

    Safety:
        Drops the result; its full content is kept in the repair record's detail. A message
        left with nothing in it is removed; a user message keeps its other blocks.
    """

    code = "TP004"
    name = "orphan-tool-result"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        calls = {p.call_id for _, p in transcript.parts() if p.kind == CALL}
        removals = []
        for entry in transcript.entries:
            orphans = [p for p in entry.parts if p.kind == RESULT and p.call_id not in calls]
            if not orphans:
                continue
            for part in orphans:
                ctx.report(
                    self, "dropped", entry, part.call_id,
                    f"dropped a result that answers no call; its content was: {ctx.describe(part)}",
                )
            removals.append((entry, orphans))
        transcript.remove_parts(removals)
