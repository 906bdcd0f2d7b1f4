from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, TEXT, Part, Transcript
from ._base import Context, Rule, _compact


class ContentPartsNotString(Rule):
    """
    What it repairs:
        A system or tool message whose content is an array of parts, bound for Groq, which
        takes only a string there: a framework that sends every content as parts (for prompt
        caching), an MCP client that passes a tool's content blocks on as they are.

    Why:
        Groq: "'messages.0' : for 'role:system' the following must be satisfied
        [('messages.0.content' : value must be a string)]"

    Example:
        Before: system [{"type": "text", "text": "You are terse."}] / user "hi"
        After:  system "You are terse." / user "hi"

    Safety:
        The text parts are joined, in order and as they are (no separator added, as a model
        reads consecutive text parts). A part that is not text (an image a tool returned)
        cannot go in a string: it is removed and kept, whole, in the repair record, which says
        so. Other roles, whose content Groq takes as parts, are left alone.
    """

    code = "PV008"
    name = "content-parts-not-string"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"groq"})
    fixes: ClassVar[tuple[str, ...]] = ("groq.X5",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return not any(
            m.get("role") in ("system", "tool") and isinstance(m.get("content"), list) for m in body["messages"]
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            content = entry.source.get("content")
            if entry.role not in ("system", "tool") or not isinstance(content, list):
                continue
            texts = [p["text"] for p in content if _is_text(p)]
            others = [p for p in content if not _is_text(p)]
            joined = "".join(texts)
            flattened = {**entry.source, "content": joined}
            entry.source = flattened
            if entry.role == "tool":
                result = entry.parts[0]
                entry.parts[0] = Part(RESULT, flattened, result.call_id, result.name)
                call_id = result.call_id
            else:
                entry.parts = [Part(TEXT, joined)] if joined else []
                call_id = None
            detail = f"joined the {len(texts)} text part(s) of a {entry.role} message into one string"
            if others:
                detail += (
                    f"; removed {len(others)} part(s) that are not text, which a string cannot hold: {_compact(others)}"
                )
            ctx.report(self, "flattened", entry, call_id, detail)


def _is_text(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
