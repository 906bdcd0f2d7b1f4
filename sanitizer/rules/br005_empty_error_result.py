from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Part, Transcript
from ._base import Context, Rule

# What the tool's failure says when the tool said nothing: a fact, not a made-up error message.
NO_ERROR_MESSAGE = "The tool failed without an error message."


class EmptyErrorResult(Rule):
    """
    What it repairs:
        A Bedrock Converse ``toolResult`` with ``status: "error"`` and no content: an agent
        framework that reports a failed tool (a sub-agent that raised, a timeout) by its status
        alone.

    Why:
        Bedrock Converse: "The content field at messages.2.content.0.toolResult cannot be empty
        when status value is error." (aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15)

    Example:
        Before: assistant toolUse t1 / user [toolResult t1 (status error, content [])]
        After:  assistant toolUse t1 / user [toolResult t1 (status error, content [text "The
                tool failed without an error message."])]

    Safety:
        Fills the empty content with one sentence that says what the status already says; the
        status, the id and every other result are untouched. A result with content is never
        changed.
    """

    code = "BR005"
    name = "empty-error-result"
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B6",)
    apis = frozenset({"bedrock-converse"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                result = part.raw.get("toolResult") if part.kind == RESULT else None
                if not isinstance(result, dict) or result.get("status") != "error" or result.get("content"):
                    continue
                ctx.report(
                    self,
                    "filled",
                    entry,
                    part.call_id,
                    f"gave the failed tool's empty result the text {NO_ERROR_MESSAGE!r}",
                )
                filled = {**result, "content": [{"text": NO_ERROR_MESSAGE}]}
                entry.parts[n] = Part(part.kind, {**part.raw, "toolResult": filled}, part.call_id, part.name)
                entry.dirty = True
