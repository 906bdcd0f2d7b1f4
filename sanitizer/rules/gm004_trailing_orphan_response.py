from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, RESULT, TEXT, Part, Transcript
from ._base import Context, Rule


class TrailingOrphanResponse(Rule):
    """
    What it repairs:
        A ``functionResponse`` in the last turn of ``contents`` that answers no function call,
        under the policy ``orphan_tool_result: drop``: a client sent the output of a tool the
        model did not call this time (it answered in text instead), or history truncation cut
        the call away. That turn is the request's new input: dropping its orphans, as the
        policy says for the others (TP004), would lose the tool's output and leave the request
        ending on a model turn. Under the default ``fold``, TP004 itself keeps them as text.

    Why:
        Gemini: "Please ensure that function response turn comes immediately after a function
        call turn." Dropping the turn instead: "Requests ending with a model turn are not
        supported."

    Example:
        Before: user "order one" / model "Which size?" / user functionResponse place_order
                {"status": "ok"}
        After:  user "order one" / model "Which size?" / user "Result of tool `place_order`,
                whose call is not in this conversation: {"status":"ok"}"

    Safety:
        Nothing is dropped: the response's name and full content go into a text part that
        takes its place in the turn. Only the last turn's orphans; earlier ones are TP004's.
    """

    code = "GM004"
    name = "trailing-orphan-response"
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G2",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if ctx.policy.orphan_tool_result != "drop" or not transcript.entries or transcript.entries[-1].role != "user":
            return
        last = transcript.entries[-1]
        calls = {p.call_id for _, p in transcript.parts() if p.kind == CALL}
        parts = []
        for part in last.parts:
            if part.kind == RESULT and part.call_id not in calls:
                output = ctx.describe(part)
                name = part.name or "unknown"
                ctx.report(self, "converted", last, part.call_id, f"turned a response to no call into text: {output}")
                text = f"Result of tool `{name}`, whose call is not in this conversation: {output}"
                part = Part(TEXT, {"text": text})
                last.dirty = True
            parts.append(part)
        last.parts = parts
