from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Part, Transcript
from ._base import Context, Rule


class FunctionResponseNotObject(Rule):
    """
    What it repairs:
        A ``functionResponse`` whose ``response`` is not an object: a tool's output passed on
        as it came, an MCP tool's content list or a plain string.

    Why:
        Gemini: "Invalid JSON payload received. Unknown name "response" at
        'contents[19].parts[0].function_response': Proto field is not repeating, cannot start
        list." Once such a response is in the history, every later request is refused.

    Example:
        Before: user functionResponse read_file {"response": [{"type": "text", "text": "hi"}]}
        After:  user functionResponse read_file {"response": {"output": [{"type": "text", "text": "hi"}]}}

    Safety:
        The value is kept whole, under ``output``: the key Gemini's API reference names for a
        function's output (``error`` for its error details). A null response is left alone.
    """

    code = "GM006"
    name = "function-response-not-object"
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.response-not-object",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for k, part in enumerate(entry.parts):
                wrapped = _wrapped(part.raw) if part.kind == RESULT else None
                if wrapped is None:
                    continue
                entry.parts[k] = Part(RESULT, wrapped, part.call_id, part.name)
                entry.dirty = True
                ctx.report(
                    self,
                    "wrapped",
                    entry,
                    part.call_id,
                    "put the function response's value, which was not an object, under 'output'",
                )


def _wrapped(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The part with its response under ``output``; None when the response is an object or null."""
    key = "functionResponse" if "functionResponse" in raw else "function_response"
    answer = raw.get(key)
    if not isinstance(answer, dict) or answer.get("response") is None or isinstance(answer["response"], dict):
        return None
    return {**raw, key: {**answer, "response": {"output": answer["response"]}}}
