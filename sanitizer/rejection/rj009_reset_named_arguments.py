from __future__ import annotations

import json
from typing import Any, ClassVar

from .._ir import CALL, Entry, Part, Transcript
from ..rules._base import Context
from ._reading import DECODER_ERROR, INVALID_ARGUMENTS
from ._strategy import Lesson, Strategy
from ._target import Named

_APIS = frozenset({"openai-chat", "openai-responses"})


class ResetNamedArguments(Strategy):
    """
    What it repairs:
        An OpenAI Chat tool call (``tool_calls[].function.arguments``) or a Responses
        ``function_call`` item (``arguments``) in the history whose arguments are empty or not
        JSON at all, where the provider parses them and says so: a stream cut off mid-call, a
        model that wrote an unescaped quote, a client that stored ``""`` for a call without
        arguments. The refusal names the call by its place or its id, or quotes the parser's
        own error, whose position only those arguments give.

    Why:
        vLLM re-parses the history's arguments for the chat template and answers with Python's
        error: "Expecting ',' delimiter: line 1 column 54 (char 53)" (vllm-project/vllm#43995),
        "Unterminated string starting at: line 1 column 113 (char 112)"
        (NousResearch/hermes-agent#12643). GitHub Copilot's endpoint: "Invalid JSON format in
        tool call arguments" (microsoft/vscode#268550). Every later turn gets the same answer.

    Example:
        Before: assistant calls replace_string_in_file (call_abc) with the arguments
                {"newString": "He said "hello" and left"}; refused: "Expecting ',' delimiter: ..."
        After:  assistant calls replace_string_in_file (call_abc) with the arguments {}

    Safety:
        Only arguments that do not parse become ``"{}"``, and only those the refusal names: at
        its place, with its id, or giving exactly the error it quotes (for a refusal that names
        no call, every call whose arguments do not parse). The original arguments are kept,
        verbatim, in the repair record; the call's id, name and result are untouched.

        Learnt for an upstream (applied before any refusal of later requests to it), it resets
        every call whose arguments are empty, ``null`` or not JSON, wherever it is: the upstream
        parses them all.
    """

    code = "RJ009"
    name = "reset-named-arguments"
    apis = _APIS
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api not in _APIS:
            return
        message = target.message
        named = [(e, p) for e, p in target.by_id if p.kind == CALL]
        if target.entry is not None and target.part is not None and target.part.kind == CALL:
            named.append((target.entry, target.part))
        quoted = DECODER_ERROR.search(message)
        if named and (quoted or "arguments" in message):
            # The refusal names calls: their arguments only, if they do not parse.
            chosen = [(e, p) for e, p in named if _error(p) is not None]
        elif quoted:
            chosen = [(e, p) for e, p in transcript.parts() if p.kind == CALL and _error(p) == quoted[0]]
        elif INVALID_ARGUMENTS.search(message) and target.entry is None:
            chosen = [(e, p) for e, p in transcript.parts() if p.kind == CALL and _error(p) is not None]
        else:
            return
        done: set[int] = set()
        for entry, part in chosen:
            if id(part) not in done:
                done.add(id(part))
                self._reset(entry, part, ctx)

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        if ctx.api not in _APIS:
            return
        for entry, part in list(transcript.parts()):
            if part.kind == CALL and _unusable(part):
                self._reset(entry, part, ctx)

    def _reset(self, entry: Entry, part: Part, ctx: Context) -> None:
        raw = part.raw
        if ctx.api == "openai-chat":
            replaced = {**raw, "function": {**raw["function"], "arguments": "{}"}}
        else:
            replaced = {**raw, "arguments": "{}"}
        at = next(i for i, p in enumerate(entry.parts) if p is part)
        entry.parts[at] = Part(CALL, replaced, part.call_id, part.name)
        entry.dirty = True
        detail = f"replaced tool call arguments the provider could not parse with {{}}; they were: {ctx.describe(part)}"
        ctx.report(self, "replaced", entry, part.call_id, detail)


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return None
    function = raw.get("function")
    if isinstance(function, dict):
        return function.get("arguments")
    return raw.get("arguments") if raw.get("type") == "function_call" else None


def _unusable(part: Part) -> bool:
    """Arguments no server can read as a JSON object: empty, null (as JSON or as text), not JSON."""
    raw = part.raw
    function = raw.get("function")
    holder = function if isinstance(function, dict) else raw if raw.get("type") == "function_call" else None
    if holder is None or "arguments" not in holder:
        return False  # a call sent without arguments is function-call-without-arguments' (OA004)
    arguments = holder["arguments"]
    if arguments is None:
        return True
    return isinstance(arguments, str) and (arguments.strip() == "null" or _error(part) is not None)


def _error(part: Part) -> str | None:
    """The error Python's parser gives for the call's arguments (as vLLM would quote it); None
    when they parse, or are not text."""
    arguments = _arguments(part.raw)
    if not isinstance(arguments, str):
        return None
    try:
        json.loads(arguments)
    except ValueError as exc:
        return str(exc)
    return None
