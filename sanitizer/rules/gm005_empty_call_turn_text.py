from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, Transcript
from ._base import Context, Rule


class EmptyCallTurnText(Rule):
    """
    What it repairs:
        A tool-calling assistant message with ``content: ""``, bound for Gemini's
        OpenAI-compatible endpoint or NVIDIA NIM: frameworks that build the call turn with an
        empty string (OpenManus's ``Message.from_tool_calls(content="")``, AutoGen, Cherry
        Studio, hand-written loops).

    Why:
        Gemini's OpenAI-compatible endpoint turns the empty string into an empty text part:
        "Unable to submit request because it has an empty text parameter. Add a value to the
        parameter and try again. Learn more:
        https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
        NVIDIA NIM: "request: Value error, Empty content is not allowed for assistant messages"
        (CherryHQ/cherry-studio#16155, google/diffusiongemma-26b-a4b-it: every turn after the
        first tool call)

    Example:
        Before: user "open example.com" / assistant {"content": "", "tool_calls": [browser_use]}
                / tool result
        After:  user "open example.com" / assistant {"content": null, "tool_calls": [browser_use]}
                / tool result

    Safety:
        An empty string holds no text, and null is what the OpenAI SDKs send for a turn that
        only calls tools, which the endpoint takes (odysseus-dev/odysseus#837), as NIM does
        (ogx-ai/ogx#1751: "NVIDIA NIM allow content=null, but not content=\"\""). Only for
        those two: OpenAI takes the empty string as it is.
    """

    code = "GM005"
    name = "empty-call-turn-text"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"gemini", "nim"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G5", "nim.empty-assistant-content")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return not any(
            m.get("role") == "assistant" and m.get("content") == "" and m.get("tool_calls") for m in body["messages"]
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            source = entry.source
            if (
                entry.role == "assistant"
                and entry.origin is not None
                and source.get("content") == ""
                and entry.parts
                and all(p.kind == CALL for p in entry.parts)
            ):
                entry.source = {**source, "content": None}
                entry.dirty = True
                ctx.report(self, "emptied", entry, None, "replaced the empty text of a tool-calling turn with null")
