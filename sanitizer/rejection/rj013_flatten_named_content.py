from __future__ import annotations

import re
from typing import Any, ClassVar

from .._ir import CALL, RESULT, TEXT, Entry, Part, Transcript
from ..rules._base import Context, _compact
from ._strategy import Lesson, Strategy
from ._target import Named

# The wordings of "this content must be a string": serde's (DeepSeek), pydantic's, JSON Schema's,
# the plain ones of hand-written checks (Groq, a tool message's template).
_STRING_EXPECTED = re.compile(
    r"expected a string|expected string|should be a valid string|must be a string|not of type 'string'|"
    r"must contain string content",
    re.IGNORECASE,
)
# A refusal that names another field of the message than its content ("messages[2].name: expected a
# string") is not about the content.
_OTHER_FIELD_OF_MESSAGE = re.compile(r"\b(?:messages|input)(?:\.|\[)\d+\]?\.(?!content\b)[a-z_]+")
# A text part of each format: OpenAI Chat's and Anthropic's, a Responses message item's.
_TEXT_TYPES = ("text", "input_text", "output_text")


class FlattenNamedContent(Strategy):
    """
    What it repairs:
        A message the provider names whose content is an array of text parts, where the
        provider takes only a string: a framework that sends every content as parts (for prompt
        caching), a tool message that passes an MCP tool's text blocks on as they are, an empty
        array of parts (an MCP tool that returned nothing). The array becomes one string.

    Why:
        DeepSeek (before it took arrays in user messages, and still for other roles):
        "Failed to deserialize the JSON body into the target type: messages[1]: invalid type:
        sequence, expected a string at line 17 column 3" (cline/cline#230, a user message
        [{"type": "text", ...}]; Gitlawb/openclaude#774 for a tool message). The registry's rule
        for that text flattens only the roles DeepSeek is known to refuse; a refusal that names
        another role gets this strategy. Pydantic servers: "messages.0.content.str Input should
        be a valid string [type=string_type, input_value=[{'type': 'text', ...}], input_type=list]"
        (epam/ai-dial-sdk#382). Every later turn carries the message again.

    Example:
        Before: user [{"type": "text", "text": "Read a.py"}, {"type": "text", "text": "then b.py"}];
                refused: "messages[0]: invalid type: sequence, expected a string"
        After:  user "Read a.py\\n\\nthen b.py"

    Safety:
        Only a content array of text parts (or no parts) becomes a string, and only that of the
        message the refusal names: a part that is not text (an image) cannot go in a string, so
        such a content is left as it is. The texts are joined in order, a blank line between
        two (as portable-profile joins them); whatever else a part held (a ``cache_control``
        hint) is kept in the repair record. OpenAI Chat (a tool message too), Anthropic, and
        Responses message items; a message's tool calls are untouched.

        Learnt for an upstream (applied before any refusal of later requests to it), it gives
        every content of text parts only a string, whatever the message's role.
    """

    code = "RJ013"
    name = "flatten-named-content"
    apis = frozenset({"openai-chat", "anthropic-messages", "openai-responses"})
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        entry = target.entry
        message = target.message
        if ctx.api not in self.apis or entry is None or not _STRING_EXPECTED.search(message):
            return
        if _OTHER_FIELD_OF_MESSAGE.search(message):
            return
        if target.part is not None and target.part.kind not in (TEXT, RESULT):
            return  # a call's arguments, an image: not the content as a whole
        self._flatten(entry, target.part, ctx)

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        if ctx.api not in self.apis:
            return
        for entry in list(transcript.entries):
            if ctx.api == "openai-responses":
                for part in list(entry.parts):
                    self._flatten(entry, part, ctx)
            else:
                self._flatten(entry, None, ctx)

    def _flatten(self, entry: Entry, named: Part | None, ctx: Context) -> None:
        if ctx.api == "openai-responses" or (ctx.api == "openai-chat" and entry.role == "tool"):
            # The message is one part: a tool message, a Responses item.
            whole = named if named is not None else (entry.parts[0] if entry.parts else None)
            if whole is not None and whole.kind in (TEXT, RESULT):
                self._flatten_whole(entry, whole, ctx)
            return
        source = entry.source.get("content")
        if not isinstance(source, list) or not all(_text_part(b) for b in source):
            return
        texts = [p for p in entry.parts if p.kind == TEXT and isinstance(p.raw, dict)]
        joined = "\n\n".join(p.raw["text"] for p in texts)
        others = [p for p in entry.parts if p.kind == CALL]
        if ctx.api == "openai-chat" and not texts:
            # An empty array: the dialect renders no text part as a null content next to calls.
            entry.source = {**entry.source, "content": ""}
            entry.parts = others
        else:
            entry.parts = [Part(TEXT, joined), *others]
        entry.dirty = True
        self._report(entry, None, [p.raw for p in texts], ctx)

    def _flatten_whole(self, entry: Entry, part: Part, ctx: Context) -> None:
        raw = part.raw
        content = raw.get("content") if isinstance(raw, dict) else None
        if not isinstance(content, list) or not all(_text_part(b) for b in content):
            return
        flattened = {**raw, "content": "\n\n".join(b["text"] for b in content)}
        replacement = Part(part.kind, flattened, part.call_id, part.name)
        entry.parts = [replacement if p is part else p for p in entry.parts]
        if entry.source is raw:
            entry.source = flattened
        entry.dirty = True
        self._report(entry, part.call_id, content, ctx)

    def _report(self, entry: Entry, call_id: str | None, parts: list[Any], ctx: Context) -> None:
        if parts:
            detail = f"gave the content's {len(parts)} text part(s) as one string{_hints(parts)}"
        else:
            detail = "gave the content's empty array of parts as an empty string"
        ctx.report(self, "joined", entry, call_id, detail)


def _text_part(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in _TEXT_TYPES and isinstance(block.get("text"), str)


def _hints(parts: list[Any]) -> str:
    """What the parts held besides their text (a ``cache_control`` hint), for the record."""
    extra = [{k: v for k, v in p.items() if k not in ("type", "text")} for p in parts]
    return f"; without the parts' other keys: {_compact(extra)}" if any(extra) else ""
