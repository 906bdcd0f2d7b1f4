from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from .._ir import CALL, RESULT, TEXT, Entry, Part, Transcript
from ..rules._base import Context, _compact
from ..rules._ids import digest, rewrite_ids
from ..validation._openai_chat import deepseek_thinks, moonshot_thinks
from ._strategy import Lesson, Strategy
from ._target import Named

# The id pattern every OpenAI-compatible provider takes: OpenAI's 40 characters, Anthropic's and
# Bedrock's characters (a gateway may carry the id there).
PORTABLE_ID = re.compile(r"^[a-zA-Z0-9_-]{1,40}\Z")
_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
# The keys of OpenAI's Chat schema for each role that every compatible server takes too: Groq's
# schema, the strictest, refuses the assistant's ``refusal`` and ``audio`` (GROQ_MESSAGE_KEYS), and
# OpenAI has no ``tool_call_id`` outside tool messages, nor ``name`` on them: clients put the
# function's name there, which Groq and Mistral take and Together refuses ("Input validation
# error", mozilla-ai/any-llm#714).
_PORTABLE_KEYS = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "name", "tool_calls", "function_call"}),
    "tool": frozenset({"role", "content", "tool_call_id"}),
    "function": frozenset({"role", "content", "name"}),
}
_REASONING = frozenset({"reasoning_content"})
# Gemini's OpenAI-compatible endpoint names a function response after its tool message's name
# (tool-result-without-name): it stays there.
_RESULT_NAME = frozenset({"name"})


class PortableProfile(Strategy):
    """
    What it repairs:
        An OpenAI Chat transcript refused by an OpenAI-compatible server whose message names no
        place, id or known violation, or names one no other strategy changes: the body is
        rewritten, whole, into the shape every compatible server takes. A message whose content
        is a list of text parts only gets a string (the texts joined by a blank line); empty
        text parts go; tool-call ids outside ``^[a-zA-Z0-9_-]{1,40}$`` get one inside it, in the
        call and its results; arguments that are empty, ``null`` or sent parsed become JSON
        object text; keys outside OpenAI's schema for the role, which not every server takes,
        go (``reasoning_content`` stays for a DeepSeek or Kimi model that thinks, which needs
        it; a tool message's ``name`` for Gemini's endpoint, which needs it). Applied once per
        request, and only when it changes something.

    Why:
        Servers that implement part of OpenAI's schema refuse the rest without saying where.
        Alibaba's DashScope, on a user message whose content is ``[{"type": "text", ...}]``:
        "InternalError.Algo.InvalidParameter: The provided messages input is invalid. The error
        info is [Unexpected item type in content.]" (can1357/oh-my-pi#1859); Together AI, on
        tool messages that carry ``name``: "Input validation error" (mozilla-ai/any-llm#714); LocalAI:
        "unsupported content[].type" (mudler/LocalAI#10552); a tool message with parts: "tool
        messages must contain string content" (Neroued/ninfer#57).

    Example:
        Before: user [{"type": "text", "text": "Read a.py"}, {"type": "text", "text": "then b.py"}]
                / assistant calls read (functions.read:0) with the arguments "" / tool result
                for functions.read:0 with a "timestamp" key; refused: "The provided messages
                input is invalid."
        After:  user "Read a.py\\n\\nthen b.py" / assistant calls read (functions_read_0) with
                the arguments "{}" / tool result for functions_read_0, without "timestamp"

    Safety:
        No text is removed: text parts are joined in order, a blank line between two (the
        separator Suture uses wherever it joins texts), and only parts with no text at all go.
        A tool result's content is never dropped. Ids are rewritten deterministically and
        one-to-one, and restored in the answer. Arguments that do not parse are left as they
        are (reset-named-arguments resets those a refusal names). Each removed key and its
        value are kept in the repair record. OpenAI Chat only: other formats are left alone.

        Learnt for an upstream (applied before any refusal of later requests to it), it rewrites
        every body the same way before it is sent.
    """

    code = "RJ011"
    name = "portable-profile"
    apis = frozenset({"openai-chat"})
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api not in self.apis:
            return
        keep = _kept_extras(transcript, ctx)
        for entry in transcript.entries:
            if entry.role == "tool":
                self._tool_message(entry, ctx, keep)
            else:
                self._message(entry, ctx, keep)
        rewrite_ids(transcript, ctx, self, PORTABLE_ID, _portable_id)

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        # The profile is the whole body's already: what it does with no refusal to read.
        self.repair(transcript, ctx, Named(None, None, [], ""))

    def _message(self, entry: Entry, ctx: Context, keep: dict[str, frozenset[str]]) -> None:
        removed = _extra_keys(entry.role, entry.source, keep.get(entry.role, frozenset()))
        if removed:
            entry.source = {k: v for k, v in entry.source.items() if k not in removed}
            entry.dirty = True
            self._removed(entry, None, removed, ctx)
        empty = [p for p in entry.parts if p.kind == TEXT and isinstance(p.raw, dict) and p.raw.get("text") == ""]
        if empty:
            entry.parts = [p for p in entry.parts if not any(p is e for e in empty)]
            entry.dirty = True
            ctx.report(self, "dropped", entry, None, f"dropped {len(empty)} empty text part(s)")
        content = [p for p in entry.parts if p.kind != CALL]
        texts = [p for p in content if isinstance(p.raw, dict)]
        if texts and all(p.kind == TEXT and _text_only(p.raw) for p in content):
            # The dialect renders a message whose parts are all strings as one string, a blank line
            # between two.
            entry.parts = [Part(TEXT, p.raw["text"]) if p.kind == TEXT else p for p in entry.parts]
            entry.dirty = True
            detail = f"gave {len(content)} text part(s) as one string content{_hints(texts)}"
            ctx.report(self, "joined", entry, None, detail)
        for at, part in enumerate(entry.parts):
            if part.kind == CALL:
                self._arguments(entry, at, part, ctx)

    def _tool_message(self, entry: Entry, ctx: Context, keep: dict[str, frozenset[str]]) -> None:
        result = entry.parts[0] if entry.parts else None
        if result is None or result.kind != RESULT or not isinstance(result.raw, dict):
            return
        message = result.raw
        removed = _extra_keys("tool", message, keep.get("tool", frozenset()))
        if removed:
            message = {k: v for k, v in message.items() if k not in removed}
            self._removed(entry, result.call_id, removed, ctx)
        content = message.get("content")
        if isinstance(content, list) and content and all(_text_only(b) for b in content):
            texts = [b["text"] for b in content if b["text"] != ""]
            message = {**message, "content": "\n\n".join(texts)}
            ctx.report(
                self, "joined", entry, result.call_id, f"gave the tool result's {len(content)} text part(s) as a string"
            )
        elif isinstance(content, list) and any(_text_only(b) and b["text"] == "" for b in content):
            kept = [b for b in content if not (_text_only(b) and b["text"] == "")]
            message = {**message, "content": kept}
            ctx.report(self, "dropped", entry, result.call_id, "dropped the tool result's empty text part(s)")
        if message is not result.raw:
            entry.parts[0] = Part(RESULT, message, result.call_id, result.name)
            entry.source = message
            entry.dirty = True

    def _arguments(self, entry: Entry, at: int, part: Part, ctx: Context) -> None:
        function = part.raw.get("function") if isinstance(part.raw, dict) else None
        if not isinstance(function, dict) or "arguments" not in function:
            return
        arguments = function["arguments"]
        if isinstance(arguments, str):
            if arguments.strip() and arguments.strip() != "null":
                return
            text = "{}"
        elif arguments is None:
            text = "{}"
        elif isinstance(arguments, dict):
            text = json.dumps(arguments, ensure_ascii=False)
        else:
            return
        entry.parts[at] = Part(CALL, {**part.raw, "function": {**function, "arguments": text}}, part.call_id, part.name)
        entry.dirty = True
        was = json.dumps(arguments, ensure_ascii=False)
        ctx.report(self, "replaced", entry, part.call_id, f"gave the call's arguments {was} as {text}")

    def _removed(self, entry: Entry, call_id: str | None, removed: dict[str, Any], ctx: Context) -> None:
        detail = f"removed the key(s) not every OpenAI-compatible server takes: {_compact(removed)}"
        ctx.report(self, "removed", entry, call_id, detail)


def _kept_extras(transcript: Transcript, ctx: Context) -> dict[str, frozenset[str]]:
    """Keys beyond the portable ones that the request's provider needs, by role: a thinking DeepSeek
    or Kimi model's ``reasoning_content`` (missing-reasoning-content's case), a tool message's
    ``name`` for Gemini's endpoint (tool-result-without-name's)."""
    body = transcript.fields()
    if (ctx.provider == "deepseek" and deepseek_thinks(body)) or (ctx.provider == "moonshot" and moonshot_thinks(body)):
        return {"assistant": _REASONING}
    if ctx.provider == "gemini":
        return {"tool": _RESULT_NAME}
    return {}


def _extra_keys(role: str, message: dict[str, Any], keep: frozenset[str]) -> dict[str, Any]:
    allowed = _PORTABLE_KEYS.get(role)
    if allowed is None:
        return {}
    return {k: v for k, v in message.items() if k not in allowed | keep}


def _hints(texts: list[Part]) -> str:
    """What the parts held besides their text (a ``cache_control`` hint), for the record."""
    extra = [{k: v for k, v in p.raw.items() if k not in ("type", "text")} for p in texts]
    return f"; without the parts' other keys: {_compact(extra)}" if any(extra) else ""


def _text_only(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _portable_id(original: str) -> str:
    """The original with other characters as ``_``; over 40 characters (or a repeat), its first 29
    and a hash of all of it."""
    cleaned = _INVALID_CHAR.sub("_", original)
    if cleaned and len(cleaned) <= 40 and "\x00" not in original:
        return cleaned
    return f"{cleaned[:29]}_{digest(original)}"
