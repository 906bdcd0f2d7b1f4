from __future__ import annotations

from typing import Any, ClassVar

from .._ir import TEXT, Part, Transcript
from ._base import Context, Rule


class BlankTextBlock(Rule):
    """
    What it repairs:
        Text that is empty or only whitespace: an ``{"type": "text", "text": ""}`` block some
        SDKs emit before a tool_use, or a message whose string content is "" or "\\n".

    Why:
        Anthropic: "messages: text content blocks must be non-empty" and
        "messages: text content blocks must contain non-whitespace text". Replacing "" with
        " " (as several gateways do) only turns the first error into the second.
        Bedrock: "The text field in the ContentBlock object at messages.2.content.0 is blank.
        Add text to the text field, and try again."

    Example:
        Before: assistant [text "", tool_use toolu_1]
        After:  assistant [tool_use toolu_1]

    Safety:
        Drops only text that says nothing. A message left with no content at all is then
        handled by empty-message (which allows an empty final assistant message).
    """

    code = "AN002"
    name = "blank-text-block"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A6", "anthropic.A7", "bedrock.B5", "gemini.G5")
    apis = frozenset({"anthropic-messages", "bedrock-converse"})
    also_for = frozenset({("openai-chat", "anthropic"), ("openai-chat", "bedrock"), ("openai-chat", "gemini")})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat body a gateway converts (for the other formats it is their own).
        if ctx.api != "openai-chat":
            return False
        for m in body["messages"]:
            content = m.get("content")
            if m.get("role") == "tool":
                continue
            if isinstance(content, str):
                if content and not content.strip():
                    return False
            elif isinstance(content, list) and any(
                block.get("type") == "text" and isinstance(block.get("text"), str) and not block["text"].strip()
                for block in content
            ):
                return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            blank = [p for p in entry.parts if p.kind == TEXT and _is_blank(p)]
            if not blank:
                continue
            ctx.report(self, "dropped", entry, None, f"dropped {len(blank)} blank text block(s)")
            entry.parts = [p for p in entry.parts if not (p.kind == TEXT and _is_blank(p))]
            entry.dirty = True


def _is_blank(part: Part) -> bool:
    text = part.raw if isinstance(part.raw, str) else part.raw.get("text")
    return isinstance(text, str) and not text.strip()
