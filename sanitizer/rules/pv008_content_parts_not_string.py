from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, RESULT, TEXT, Part, Transcript
from ._base import Context, Rule, _compact

# The roles whose content each provider takes only as a string (tuples: a role that cannot be
# hashed, in an item the Responses check passes on unread, is simply not one of them).
_STRING_ROLES = {
    "groq": ("system", "tool"),
    "deepseek": ("assistant",),
}


class ContentPartsNotString(Rule):
    """
    What it repairs:
        A message whose content is an array of parts where the provider takes only a string:
        a system or tool message bound for Groq, an assistant message bound for DeepSeek. A
        framework that sends every content as parts (for prompt caching), an MCP client that
        passes a tool's content blocks on as they are, an agent that builds a tool-calling
        turn's content from its parts that are not calls (none: ``[]``).

    Why:
        Groq: "'messages.0' : for 'role:system' the following must be satisfied
        [('messages.0.content' : value must be a string)]"
        DeepSeek: "Failed to deserialize the JSON body into the target type: messages[2]:
        invalid type: sequence, expected a string at line 1 column 587"
        (google/adk-python#226, huggingface/smolagents#1158)

    Example:
        Before: system [{"type": "text", "text": "You are terse."}] / user "hi"
        After:  system "You are terse." / user "hi"
        Before (bound for DeepSeek): user "weather?" / assistant content [], calls get_weather
        After:  user "weather?" / assistant content "", calls get_weather

    Safety:
        The text parts are joined, in order and as they are (no separator added, as a model
        reads consecutive text parts); no text part gives an empty string, which the provider
        takes (DeepSeek next to tool calls too: its own tool-calling answers carry one). A part
        that is not text (an image a tool returned) cannot go in a string: it is removed and
        kept, whole, in the repair record, which says so. Tool calls are untouched. Other
        roles, whose content the provider takes as parts, are left alone.

        A Responses body bound for DeepSeek (LiteLLM's bridge turns an assistant message item's
        ``output_text`` parts into just such an array) gets the same: the item's content becomes
        the string the bridge then passes on as it is.
    """

    code = "PV008"
    name = "content-parts-not-string"
    apis = frozenset({"openai-chat"})
    providers = frozenset(_STRING_ROLES)
    also_for = frozenset({("openai-responses", "deepseek")})
    fixes: ClassVar[tuple[str, ...]] = ("groq.X5", "deepseek.content-not-string")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        roles = _STRING_ROLES[ctx.provider or ""]
        messages = body.get("input") if ctx.api == "openai-responses" else body["messages"]
        if not isinstance(messages, list):
            return True
        return not any(
            isinstance(m, dict) and m.get("role") in roles and isinstance(m.get("content"), list) for m in messages
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        roles = _STRING_ROLES[ctx.provider or ""]
        if ctx.api == "openai-responses":
            self._flatten_items(transcript, ctx, roles)
            return
        for entry in transcript.entries:
            # A tool message is rendered from its result part, which an earlier rule may have
            # changed (given it its call's id): flatten that, not the message as it came.
            message = entry.parts[0].raw if entry.role == "tool" else entry.source
            content = message.get("content")
            if entry.role not in roles or not isinstance(content, list):
                continue
            joined, count, others = _flatten(content, _CHAT_TEXT)
            flattened = {**message, "content": joined}
            entry.source = flattened
            entry.dirty = True
            if entry.role == "tool":
                result = entry.parts[0]
                entry.parts[0] = Part(RESULT, flattened, result.call_id, result.name)
                call_id = result.call_id
            else:
                entry.parts = ([Part(TEXT, joined)] if joined else []) + [p for p in entry.parts if p.kind == CALL]
                call_id = None
            if content:
                detail = f"joined the {count} text part(s) of {_a(entry.role)} message into one string"
            else:
                detail = f"replaced the empty content array of {_a(entry.role)} message with an empty string"
            ctx.report(self, "flattened", entry, call_id, detail + _removed(others))

    def _flatten_items(self, transcript: Transcript, ctx: Context, roles: tuple[str, ...]) -> None:
        """The Responses form: a message item is one text part of its entry, the item itself."""
        for entry in transcript.entries:
            for index, part in enumerate(entry.parts):
                item = part.raw
                if part.kind != TEXT or not isinstance(item, dict) or item.get("role") not in roles:
                    continue
                content = item.get("content")
                if not isinstance(content, list):
                    continue
                joined, count, others = _flatten(content, _ITEM_TEXT)
                flattened = {**item, "content": joined}
                entry.parts[index] = Part(TEXT, flattened)
                if entry.source is item:
                    entry.source = flattened
                entry.dirty = True
                detail = f"joined the {count} text part(s) of {_a(item['role'])} message item into one string"
                ctx.report(self, "flattened", entry, None, detail + _removed(others))


# The part types that are text: Chat's, and a Responses message item's (tuples: a type that
# cannot be hashed is simply not text).
_CHAT_TEXT = ("text",)
_ITEM_TEXT = ("output_text", "input_text", "text")


def _flatten(content: list[Any], text_types: tuple[str, ...]) -> tuple[str, int, list[Any]]:
    """The text parts of ``content`` joined in order, how many there were, and the other parts."""
    texts: list[str] = []
    others: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") in text_types and isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            others.append(part)
    return "".join(texts), len(texts), others


def _removed(others: list[Any]) -> str:
    """The repair record's words for the parts a string cannot hold, kept whole."""
    if not others:
        return ""
    return f"; removed {len(others)} part(s) that are not text, which a string cannot hold: {_compact(others)}"


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in ("a", "e", "i", "o", "u") else f"a {role}"
