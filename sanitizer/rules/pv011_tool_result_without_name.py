from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Part, Transcript
from ._base import Context, Rule


class ToolResultWithoutName(Rule):
    """
    What it repairs:
        A tool message without ``name``, bound for Gemini's OpenAI-compatible endpoint, which
        names the function response after it: OpenAI needs only ``tool_call_id``, so most
        agents send nothing else (Hermes Agent, and results Suture adds for unanswered calls).

    Why:
        Gemini's OpenAI-compatible endpoint: "Request contains an invalid argument."
        (NousResearch/hermes-agent#16478)

    Example:
        Before: assistant calls web_extract (call_7f3a91c2) /
                tool {"tool_call_id": "call_7f3a91c2", "content": "page text"}
        After:  assistant calls web_extract (call_7f3a91c2) /
                tool {"tool_call_id": "call_7f3a91c2", "content": "page text",
                "name": "web_extract"}

    Safety:
        Adds the function name of the call the message answers (the nearest call before it
        with its id), taken from the body itself; nothing is removed. A name the message
        already has is never changed, and a message whose call names no function is left
        as it is. Only for Gemini's endpoint: OpenAI reads a tool message's name nowhere.
    """

    code = "PV011"
    name = "tool-result-without-name"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.compat-result-without-name",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return all(_named(m) for m in body["messages"] if m.get("role") == "tool")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        called: dict[str, str] = {}
        for entry in transcript.entries:
            for part in entry.calls():
                if part.call_id is not None and part.name:
                    called[part.call_id] = part.name
            if entry.role != "tool" or _named(entry.parts[0].raw):
                continue
            result = entry.parts[0]
            name = called.get(result.call_id or "")
            if name is None:
                continue
            named = {**result.raw, "name": name}
            entry.parts[0] = Part(RESULT, named, result.call_id, result.name)
            entry.source = named
            entry.dirty = True
            ctx.report(self, "named", entry, result.call_id, f"gave a tool message the name of its call, {name!r}")


def _named(message: Any) -> bool:
    name = message.get("name") if isinstance(message, dict) else None
    return isinstance(name, str) and bool(name)
