from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, Transcript
from ._base import Context, Rule


class ToolUseNotLast(Rule):
    """
    What it repairs:
        An assistant message in which a ``tool_use`` block is followed by other content: text
        a client stored after the call, a ``server_tool_use`` and its result stored after a
        client call made in the same turn, or a thinking block replayed after the call.

    Why:
        The calls must be the last thing the assistant says, right before their results;
        Anthropic rejects the request with the missing-result error even though the results
        do follow: "messages.1: `tool_use` ids were found without `tool_result` blocks
        immediately after: call_1. Each `tool_use` block must have a corresponding
        `tool_result` block in the next message." (a recorded response to
        assistant [tool_use call_1, text] / user [tool_result call_1]; the same content sent
        with the text first is accepted)

    Example:
        Before: assistant [tool_use call_1, text "I will check the weather."] /
                user [tool_result call_1]
        After:  assistant [text "I will check the weather.", tool_use call_1] /
                user [tool_result call_1]

    Safety:
        Moves blocks inside the message only: the other blocks go first in their order, the
        tool_use blocks last in theirs. Nothing is edited or dropped; a thinking block that
        opened the message still opens it, and one stored after a call moves ahead of it.
    """

    code = "AN010"
    name = "tool-use-not-last"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A1",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            # One part is in order whatever it is: most messages, asked on every turn.
            if entry.role != "assistant" or len(entry.parts) < 2:
                continue
            calls = [p.kind == CALL for p in entry.parts]
            if calls == sorted(calls):
                continue
            last_other = max(n for n, is_call in enumerate(calls) if not is_call)
            for n, part in enumerate(entry.parts[:last_other]):
                if calls[n]:
                    ctx.report(
                        self,
                        "moved",
                        entry,
                        part.call_id,
                        "moved the tool_use block after the message's other blocks, right before its result",
                    )
            entry.parts = [p for p in entry.parts if p.kind != CALL] + [p for p in entry.parts if p.kind == CALL]
            entry.dirty = True
