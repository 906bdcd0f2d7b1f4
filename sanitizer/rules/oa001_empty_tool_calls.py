from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule


class EmptyToolCalls(Rule):
    """
    What it repairs:
        An assistant message with ``tool_calls: []`` (some SDKs serialise "no calls" that way).

    Why:
        OpenAI: "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum
        length 1, but got an empty array instead."
        DashScope (Qwen): "<400> InternalError.Algo.InvalidParameter: Empty tool_calls is not
        supported in message." (cnblogs/dashscope-sdk PR#74)

    Example:
        Before: assistant {"content": "Done.", "tool_calls": []}
        After:  assistant {"content": "Done."}

    Safety:
        Removes the empty list only. A message left with no content at all (``content``
        null or "") is removed, since it says nothing.
    """

    code = "OA001"
    name = "empty-tool-calls"
    fixes: ClassVar[tuple[str, ...]] = ("openai.O5", "dashscope.X2")
    apis = frozenset({"openai-chat"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        kept = []
        for entry in transcript.entries:
            if entry.role != "assistant" or entry.source.get("tool_calls") != []:
                kept.append(entry)
                continue
            entry.dirty = True
            if entry.parts:
                ctx.report(self, "removed", entry, None, "removed an empty tool_calls list")
                kept.append(entry)
            else:
                ctx.report(self, "removed", entry, None, "removed an assistant message with no content and no calls")
        transcript.entries = kept
