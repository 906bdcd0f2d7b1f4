from __future__ import annotations

from typing import Any, ClassVar

from .._ir import TEXT, Entry, Part, Transcript
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

        Anthropic takes a whitespace-only block in a message whose other text says something
        (LibreChat-AI/agents PR#124, tested on the live API), so there it is left alone, except
        in the final assistant turn.

    Example:
        Before: assistant [text "", tool_use toolu_1]
        After:  assistant [tool_use toolu_1]
        Before (Anthropic): user [text "\n", text "what's up?"]
        After:  the same (accepted as it is)

    Safety:
        Drops only text that says nothing. A message left with no content at all is then
        handled by empty-message (which allows an empty final assistant message). Whitespace
        the provider takes (a separator a client put between blocks on purpose) is kept.
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
        anthropic = ctx.api == "anthropic-messages" or (ctx.api, ctx.provider) == ("openai-chat", "anthropic")
        final = _final_assistant_turn(transcript.entries) if anthropic else set()
        for entry in transcript.entries:
            # A plain loop over text parts: this runs over every part of every turn.
            blank = None
            for part in entry.parts:
                if part.kind == TEXT and _is_blank(part):
                    if blank is None:
                        blank = []
                    blank.append(part)
            if blank is None:
                continue
            if anthropic and id(entry) not in final and any(_says_something(p) for p in entry.parts):
                # Anthropic takes whitespace next to text that says something, but not nothing at all.
                blank = [p for p in blank if not _text_of(p)]
                if not blank:
                    continue
            ctx.report(self, "dropped", entry, None, f"dropped {len(blank)} blank text block(s)")
            dropped = {id(p) for p in blank}
            entry.parts = [p for p in entry.parts if id(p) not in dropped]
            entry.dirty = True


def _final_assistant_turn(entries: list[Entry]) -> set[int]:
    """The trailing assistant messages (system messages aside): the final assistant turn, once
    empty-message, which runs later, has removed the messages after it that hold nothing or only
    blank text (emptied here). Judged before that removal, the turn would be final only on a
    second pass, whose repair the first had left to the provider's 400."""
    final: set[int] = set()
    for entry in reversed(entries):
        if entry.role in ("system", "developer"):
            continue
        if entry.role != "assistant":
            if all(_is_blank(p) for p in entry.parts):
                continue
            break
        final.add(id(entry))
    return final


def _text_of(part: Part) -> str | None:
    text = part.raw if isinstance(part.raw, str) else part.raw.get("text")
    return text if part.kind == TEXT and isinstance(text, str) else None


def _is_blank(part: Part) -> bool:
    text = _text_of(part)
    return text is not None and not text.strip()


def _says_something(part: Part) -> bool:
    text = _text_of(part)
    return text is not None and bool(text.strip())
