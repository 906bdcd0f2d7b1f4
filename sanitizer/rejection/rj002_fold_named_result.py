from __future__ import annotations

from .._ir import CALL, RESULT, Transcript
from ..rules._base import Context
from ..rules.tp004_orphan_tool_result import OrphanToolResult
from ._strategy import Strategy
from ._target import Named


class FoldNamedResult(Strategy):
    """
    What it repairs:
        A tool result the provider names as answering no call, whose call the body does not
        hold either, where the rules kept it: an OpenAI Responses request continuing a stored
        chain (previous_response_id) whose earlier calls the server no longer finds.

    Why:
        "No tool call found for function call output with call_id call_7." The provider keeps
        refusing the turn while the result stays.

    Example:
        Before: previous_response_id "resp_1" / function_call_output (call_7) "42"; refused naming call_7
        After: previous_response_id "resp_1" / user "Result of tool call call_7 returned earlier: 42"

    Safety:
        As orphan-tool-result (TP004): fold (default) keeps what the tool returned as user text,
        labelled with the call id; drop keeps it in the repair record only.
    """

    code = "RJ002"
    name = "fold-named-result"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        calls = {p.call_id for _, p in transcript.parts() if p.kind == CALL}
        orphans = [(e, p) for e, p in target.by_id if p.kind == RESULT and p.call_id not in calls]
        if not orphans:
            return
        fold = OrphanToolResult()
        named = {id(p) for _, p in orphans}
        removals = []
        for index, entry in enumerate(transcript.entries):
            parts = [p for p in entry.parts if id(p) in named]
            if not parts:
                continue
            if ctx.policy.orphan_tool_result == "fold":
                transcript.entries[index] = fold.fold(entry, parts, ctx, self)
                continue
            for part in parts:
                detail = f"dropped a result that answers no call; its content was: {ctx.describe(part)}"
                ctx.report(self, "dropped", entry, part.call_id, detail)
            removals.append((entry, parts))
        transcript.remove_parts(removals)
