from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Entry, Part, Transcript
from ._base import Context, Rule


class DuplicateToolResult(Rule):
    """
    What it repairs:
        Several results for one tool call: a session restored twice, a framework that wrote
        an "interrupted" result and then the real one, two histories merged.

    Why:
        OpenAI: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1', in
        messages[2] and messages[3]."
        Anthropic: "each tool_use must have a single result. Found multiple tool_result blocks
        with id: toolu_1"

    Example:
        Before: assistant calls ls (call_1) / tool result "Tool was interrupted." /
                tool result "file_a file_b"
        After:  assistant calls ls (call_1) / tool result "file_a file_b"

    Safety:
        Keeps the last result (the most recent word on the call) and drops the earlier ones;
        each dropped result's content is kept in its repair record.
    """

    code = "TP005"
    name = "duplicate-tool-result"
    fixes: ClassVar[tuple[str, ...]] = ("openai.O4", "anthropic.duplicate-result")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        seen: dict[str | None, list[tuple[Entry, Part]]] = {}
        for entry, part in transcript.parts():
            if part.kind == RESULT:
                seen.setdefault(part.call_id, []).append((entry, part))
        removals = []
        for call_id, results in seen.items():
            for entry, part in results[:-1]:
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    call_id,
                    f"dropped an earlier duplicate result (the last one is kept); its content was: "
                    f"{ctx.describe(part)}",
                )
                removals.append((entry, [part]))
        transcript.remove_parts(removals)
