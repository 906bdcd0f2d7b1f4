from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, OTHER, RESULT, TEXT, Entry, Part, Transcript
from ..validation._openai_chat import ollama_reads_part
from ._base import Context, Rule, _compact

# The roles whose content each provider takes only as a string (tuples: a role that cannot be
# hashed, in an item the Responses check passes on unread, is simply not one of them).
_STRING_ROLES = {
    "groq": ("system", "tool"),
    "deepseek": ("assistant",),
    "sambanova": ("system", "developer", "user", "assistant", "tool"),
}
# Providers whose string rule holds for arrays of text parts only (a SambaNova vision model takes
# image parts): an array that holds another part is left as it is.
_TEXT_ONLY = frozenset({"sambanova"})


class ContentPartsNotString(Rule):
    """
    What it repairs:
        A message whose content is an array of parts where the provider takes only a string:
        a system or tool message bound for Groq, an assistant message bound for DeepSeek. A
        framework that sends every content as parts (for prompt caching), an MCP client that
        passes a tool's content blocks on as they are, an agent that builds a tool-calling
        turn's content from its parts that are not calls (none: ``[]``). Bound for SambaNova, an
        array of text parts in a message of any role (claude-code-router's). Bound for Ollama,
        which takes parts but only of its three types, a part of another type (a replayed
        assistant message's ``refusal`` part, a Responses-style ``input_text``, a ``file``) or a
        text part whose ``text`` is not a string, in a message of any role.

    Why:
        Groq: "'messages.0' : for 'role:system' the following must be satisfied
        [('messages.0.content' : value must be a string)]"
        DeepSeek: "Failed to deserialize the JSON body into the target type: messages[2]:
        invalid type: sequence, expected a string at line 1 column 587"
        (google/adk-python#226, huggingface/smolagents#1158)
        SambaNova: "Unable to tokenize message with status code 400 for model DeepSeek-V3.1:
        Invalid 'content' type. Expected one of: ['str'], got list."
        (musistudio/claude-code-router#965)
        Ollama: "invalid message format" (tombii/better-ccflare#141)

    Example:
        Before: system [{"type": "text", "text": "You are terse."}] / user "hi"
        After:  system "You are terse." / user "hi"
        Before (bound for DeepSeek): user "weather?" / assistant content [], calls get_weather
        After:  user "weather?" / assistant content "", calls get_weather
        Before (bound for Ollama): assistant [{"type": "refusal", "refusal": "I can't."}] /
                user "why?"
        After:  assistant [{"type": "text", "text": "I can't."}] / user "why?"

    Safety:
        The text parts are joined, in order and as they are (no separator added, as a model
        reads consecutive text parts); no text part gives an empty string, which the provider
        takes (DeepSeek next to tool calls too: its own tool-calling answers carry one). A part
        that is not text (an image a tool returned) cannot go in a string: it is removed and
        kept, whole, in the repair record, which says so. Tool calls are untouched. Other
        roles, whose content the provider takes as parts, are left alone. Bound for SambaNova,
        only an array of text parts becomes a string: one that holds an image is left as it is.
        Bound for Ollama the content stays an array: a part it cannot read that holds text
        (``input_text``, ``output_text``, a ``refusal``) becomes a text part with that text, in
        its place; one that holds none it can read (a ``file``, a text part whose text is not a
        string) is removed and kept, whole, in the repair record; its images and audio stay.

        A Responses body bound for DeepSeek (LiteLLM's bridge turns an assistant message item's
        ``output_text`` parts into just such an array) gets the same: the item's content becomes
        the string the bridge then passes on as it is.
    """

    code = "PV008"
    name = "content-parts-not-string"
    apis = frozenset({"openai-chat"})
    providers = frozenset({*_STRING_ROLES, "ollama"})
    also_for = frozenset({("openai-responses", "deepseek")})
    fixes: ClassVar[tuple[str, ...]] = (
        "groq.X5",
        "deepseek.content-not-string",
        "sambanova.content-not-string",
        "ollama.invalid-message-format",
    )

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        if ctx.provider == "ollama":
            return not any(_unreadable(m.get("content")) for m in body["messages"] if isinstance(m, dict))
        roles = _STRING_ROLES[ctx.provider or ""]
        text_only = ctx.provider in _TEXT_ONLY
        messages = body.get("input") if ctx.api == "openai-responses" else body["messages"]
        if not isinstance(messages, list):
            return True
        return not any(
            isinstance(m, dict)
            and m.get("role") in roles
            and isinstance(m.get("content"), list)
            and not (text_only and _holds_other(m["content"]))
            for m in messages
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if ctx.provider == "ollama":
            for entry in transcript.entries:
                self._ollama(entry, ctx)
            return
        roles = _STRING_ROLES[ctx.provider or ""]
        text_only = ctx.provider in _TEXT_ONLY
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
            if text_only and _holds_other(content):
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

    def _ollama(self, entry: Entry, ctx: Context) -> None:
        """Ollama's form: the parts it cannot read, given as text parts or removed; the array stays."""
        if entry.role == "tool":
            # A tool message is rendered from its result part (which an earlier rule may have changed).
            result = entry.parts[0]
            content = result.raw.get("content")
            if not isinstance(content, list) or not _unreadable(content):
                return
            kept, converted, removed = _readable(content)
            filled = {**result.raw, "content": kept or ""}
            entry.parts[0] = Part(RESULT, filled, result.call_id, result.name)
            entry.source = filled
            call_id = result.call_id
        else:
            content = [p.raw for p in entry.parts if p.kind != CALL]
            if not _unreadable(content):
                return
            kept, converted, removed = _readable(content)
            calls = [p for p in entry.parts if p.kind == CALL]
            # The content's parts, then the calls, as the dialect keeps them.
            parts = [Part(TEXT if isinstance(p, str) or p.get("type") == "text" else OTHER, p) for p in kept]
            entry.parts = parts + calls
            call_id = None
        entry.dirty = True
        detail = "gave the content part(s) Ollama cannot read"
        if converted:
            detail += f" as text parts ({', '.join(converted)})"
        if removed:
            detail += f"; removed {len(removed)} part(s) that hold nothing it reads: {_compact(removed)}"
        ctx.report(self, "converted", entry, call_id, detail)

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


def _unreadable(content: object) -> bool:
    """Whether a content array holds a part Ollama's OpenAI layer cannot read."""
    return isinstance(content, list) and any(isinstance(p, dict) and not ollama_reads_part(p) for p in content)


def _readable(content: list[Any]) -> tuple[list[Any], list[str], list[Any]]:
    """The parts Ollama reads, each unreadable one that holds text given as a text part in its
    place; the types so converted; the parts removed (they hold nothing it reads)."""
    kept: list[Any] = []
    converted: list[str] = []
    removed: list[Any] = []
    for part in content:
        text = _part_text(part)
        if not isinstance(part, dict) or ollama_reads_part(part):
            kept.append(part)
        elif text is not None:
            kept.append({"type": "text", "text": text})
            converted.append(str(part.get("type")))
        else:
            removed.append(part)
    return kept, converted, removed


def _part_text(part: Any) -> str | None:
    """The text a part Ollama cannot read holds: an ``input_text`` or ``output_text`` part's, a
    ``refusal`` part's refusal; None for a part that holds none."""
    if not isinstance(part, dict):
        return None
    kind = part.get("type")
    text = part.get("refusal") if kind == "refusal" else part.get("text") if kind in _ITEM_TEXT else None
    return text if isinstance(text, str) and kind != "text" else None


def _holds_other(content: list[Any]) -> bool:
    """Whether a content array holds a part that is not text."""
    return not all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content)


def _removed(others: list[Any]) -> str:
    """The repair record's words for the parts a string cannot hold, kept whole."""
    if not others:
        return ""
    return f"; removed {len(others)} part(s) that are not text, which a string cannot hold: {_compact(others)}"


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in ("a", "e", "i", "o", "u") else f"a {role}"
