from __future__ import annotations

import re
import unicodedata
from typing import Any, ClassVar

from .._ir import CALL, Entry, Part, Transcript
from ..dialects.openai_chat import refused_name
from ._base import Context, Rule

_OUTSIDE = re.compile(r"[^a-zA-Z0-9_-]")


def allowed_name(name: str) -> str:
    """``name`` within OpenAI's pattern: accents dropped (``João`` is ``Joao``), every other
    character it refuses replaced by ``_``."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _OUTSIDE.sub("_", bare)


class InvalidNameCharacters(Rule):
    """
    What it repairs:
        An OpenAI Chat message whose ``name`` (the participant's name, or a legacy function
        message's function), or a replayed tool call whose ``function.name`` (or legacy
        ``function_call.name``), holds characters outside letters, digits, ``_`` and ``-``: a
        flow that names its participants after what a user typed (Flowise), an MCP client whose
        history keeps a server's tool name with its dots or slashes after the definitions were
        renamed (mcp-use), a framework that names a message after its agent ("Research Agent").

    Why:
        OpenAI: "Invalid 'messages[5].name': string does not match pattern. Expected a string
        that matches the pattern '^[a-zA-Z0-9_-]+$'." (FlowiseAI/Flowise#2948), and for a call
        in the history "Invalid 'messages[9].tool_calls[0].function.name': string does not
        match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
        (mcp-use/mcp-use#90), on every request from then on, since the history keeps the name.

    Example:
        Before: user (name "João Müller") "what is my order status?"
        After:  user (name "Joao_Muller") "what is my order status?"
        Before: assistant calls "files.read" (call_1) / tool result call_1 "contents"
        After:  assistant calls "files_read" (call_1) / tool result call_1 "contents"

    Safety:
        Accents are dropped (``João`` becomes ``Joao``) and every other refused character
        becomes ``_``; the rest of the name stays as it was: the model still tells the
        participants apart and reads which tool was called with what. The call's id,
        arguments and result are untouched, and a tool or function message that repeats the
        call's name is renamed alike. Names that are empty (unnamed-tool-call's) or not
        strings are left as they are, and so are the tool definitions (``tools``): a call the
        model makes is dispatched by its name, which only the agent may change. A call (or a
        function message) whose name the request's own tools declare is left too: a provider
        that takes the declaration takes the name, and renaming the call would set it apart.
        For every provider the Chat body is bound for: the pattern is OpenAI's schema, which
        OpenAI-compatible servers copy, and a name within it is a name anywhere.
    """

    code = "OA008"
    name = "invalid-name-characters"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O14",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # A transcript calls a few tools many times: each name is matched once. A name the
        # request's own tools declare is fine too: a provider that takes the declaration takes
        # the name, and renaming the call would set it apart from its tool.
        fine: set[str] = _declared(transcript.body)
        for entry in transcript.entries:
            named = entry.source.get("name")
            if type(named) is str and (named not in fine or entry.role in _PARTICIPANTS):
                if refused_name(named):
                    self._rename_message(entry, named, ctx)
                else:
                    fine.add(named)
            if entry.role != "assistant":
                continue
            legacy = entry.source.get("function_call")
            if isinstance(legacy, dict) and refused_name(legacy.get("name")) and legacy["name"] not in fine:
                called = legacy["name"]
                renamed = allowed_name(called)
                entry.source = {**entry.source, "function_call": {**legacy, "name": renamed}}
                ctx.report(self, "renamed", entry, None, _detail("the function call's name", called, renamed))
            for n, part in enumerate(entry.parts):
                if part.kind != CALL:
                    continue
                function = part.raw.get("function")
                called = function.get("name") if isinstance(function, dict) else None
                if type(called) is not str or called in fine:
                    continue
                if not refused_name(called):
                    fine.add(called)
                    continue
                renamed = allowed_name(called)
                entry.parts[n] = Part(
                    CALL, {**part.raw, "function": {**function, "name": renamed}}, part.call_id, renamed
                )
                entry.dirty = True
                ctx.report(self, "renamed", entry, part.call_id, _detail("the tool call's name", called, renamed))

    def _rename_message(self, entry: Entry, named: str, ctx: Context) -> None:
        renamed = allowed_name(named)
        entry.source = {**entry.source, "name": renamed}
        # A tool message is rendered from its result part once another rule touches it.
        for n, part in enumerate(entry.parts):
            raw = part.raw
            if isinstance(raw, dict) and raw.get("role") == "tool" and "name" in raw:
                entry.parts[n] = Part(part.kind, {**raw, "name": renamed}, part.call_id, part.name)
        answered = entry.parts[0].call_id if entry.role == "tool" and entry.parts else None
        ctx.report(self, "renamed", entry, answered, _detail(f"the {entry.role} message's name", named, renamed))


_PARTICIPANTS = frozenset(("system", "developer", "user", "assistant"))
"""Roles whose name is a participant's, which no tool declaration vouches for."""


def _declared(body: dict[str, Any]) -> set[str]:
    """The function names the request's ``tools`` (and legacy ``functions``) declare."""
    tools, functions = body.get("tools"), body.get("functions")
    declared = []
    if isinstance(tools, list):
        declared += [t.get("function") for t in tools if isinstance(t, dict)]
    if isinstance(functions, list):
        declared += functions
    return {f["name"] for f in declared if isinstance(f, dict) and type(f.get("name")) is str}


def _detail(what: str, name: str, renamed: str) -> str:
    return f"replaced the characters OpenAI refuses in {what} {name!r}: {renamed!r}"
