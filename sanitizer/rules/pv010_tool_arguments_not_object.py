from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

import orjson

from .._ir import CALL, Part, Transcript
from ..validation._openai_chat import (
    arguments_hold_object,
    ollama_refuses_arguments,
    sglang_arguments_refusal,
    xai_refuses_arguments,
)
from ._base import Context, Rule


class ToolArgumentsNotObject(Rule):
    """
    What it repairs:
        A Chat tool call whose ``function.arguments`` is not the JSON text of an object, bound
        for a provider that parses it: the object's JSON encoded once more as a JSON string (an
        agent that ``json.dumps`` arguments it already holds as text), text cut off
        mid-stream, a list, ``null``. Bound for xAI, which parses the arguments as JSON of any
        kind: empty text and text that is not JSON (an agent that seeds its history with a call
        it made itself, with no arguments). Bound for Ollama or SGLang, which parse them into an
        object: empty text too (a call to a tool that takes no arguments, streamed as nothing).

    Why:
        MiniMax: "invalid params, invalid function arguments json string, tool_call_id:
        Dyx3YtQx5 (2013)" (obot-platform/nanobot#237)
        Anthropic's OpenAI-compatible endpoint, which makes the arguments a tool_use input:
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary"
        xAI: "The arguments to a tool_call with ID 'initial_list_datasets' are not a valid JSON
        string. Parsing error: Error("EOF while parsing a value", line: 1, column: 0)"
        (spiceai/spiceai#4734, grok-2: on every request, the call being in the history)
        Ollama: "invalid tool call arguments"
        SGLang: "Assistant tool call function.arguments must be valid JSON." and "Assistant tool
        call function.arguments must be a JSON object." (parse_tool_call_arguments)

    Example:
        Before (bound for MiniMax): assistant calls read_file (Dyx3YtQx5) with the arguments
                "{\\"path\\": \\"a.txt\\"}"  (a JSON string, quotes and backslashes included)
        After:  assistant calls read_file (Dyx3YtQx5) with the arguments {"path": "a.txt"}
        Before: assistant calls Bash with the arguments {"command": "ls -   (cut off)
        After:  assistant calls Bash with the arguments {}
        Before (bound for xAI): assistant calls list_datasets (initial_list_datasets) with the
                arguments ""
        After:  assistant calls list_datasets (initial_list_datasets) with the arguments {}

    Safety:
        The JSON text of an object that was encoded as a JSON string (once or more) is
        unwrapped to that text, exactly as it was, so nothing is lost. Anything else becomes
        ``"{}"``, and the original arguments are kept, verbatim, in the repair record. Empty
        arguments are left as they are, except bound for xAI, Ollama or SGLang, which refuse
        them: they become ``"{}"``, the object a call with no arguments stands for. Bound for
        those three, only what the provider refuses is repaired: for xAI, JSON text of any kind,
        a JSON string included, is left as it is; for Ollama, ``null`` (which it reads as no
        arguments).
        The call's id, name and result are untouched.
    """

    code = "PV010"
    name = "tool-arguments-not-object"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"minimax", "anthropic", "xai", "ollama", "sglang"})
    fixes: ClassVar[tuple[str, ...]] = (
        "minimax.arguments-not-object",
        "anthropic.A18",
        "xai.arguments-not-json",
        "ollama.invalid-tool-call-arguments",
        "sglang.arguments-not-object",
    )

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        refuses = _REFUSES.get(ctx.provider or "")
        if refuses is not None:
            return not any(
                refuses(_arguments(call)) for message in body["messages"] for call in message.get("tool_calls") or ()
            )
        # orjson is stricter than json, never laxer: where it says object, json does too, and a
        # doubt goes to apply (a parse with orjson costs a tenth of json's on a long transcript).
        for message in body["messages"]:
            for call in message.get("tool_calls") or ():
                arguments = _arguments(call)
                if not isinstance(arguments, str) or not arguments.strip():
                    continue
                try:
                    if type(orjson.loads(arguments)) is not dict:
                        return False
                except orjson.JSONDecodeError:
                    return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != CALL:
                    continue
                arguments = _arguments(part.raw)
                refuses = _REFUSES.get(ctx.provider or "")
                if refuses is not None:
                    if not refuses(arguments):
                        continue
                elif not isinstance(arguments, str) or arguments_hold_object(arguments):
                    continue
                unwrapped = _object_text_in(arguments)
                function = {**part.raw["function"], "arguments": unwrapped or "{}"}
                entry.parts[n] = Part(CALL, {**part.raw, "function": function}, part.call_id, part.name)
                entry.dirty = True
                if unwrapped is not None:
                    action = "unwrapped"
                    detail = "unwrapped tool call arguments sent as a JSON string holding the object's JSON text"
                elif arguments == "":
                    action = "replaced"
                    detail = "replaced empty tool call arguments, which the provider parses as JSON, with {}"
                else:
                    action = "replaced"
                    detail = (
                        "replaced tool call arguments that are not a JSON object with {}; "
                        f"they were: {ctx.describe(part)}"
                    )
                ctx.report(self, action, entry, part.call_id, detail)


# The providers that parse the arguments their own way, each refusing what its test says: only that is repaired.
_REFUSES: dict[str, Callable[[object], bool]] = {
    "xai": xai_refuses_arguments,
    "ollama": ollama_refuses_arguments,
    "sglang": lambda arguments: sglang_arguments_refusal(arguments) is not None,
}


def _arguments(call: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    return function.get("arguments") if isinstance(function, dict) else None


def _object_text_in(text: str) -> str | None:
    """The JSON text of an object that ``text`` holds as a JSON string, however many times
    encoded; None if it holds none. Each step is a shorter string, so the loop ends."""
    while True:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if isinstance(value, dict):
            return text
        if not isinstance(value, str):
            return None
        text = value
