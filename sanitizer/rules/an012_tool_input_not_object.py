from __future__ import annotations

import json
from typing import Any, ClassVar

from .._ir import CALL, Part, Transcript
from ._base import Context, Rule


class ToolInputNotObject(Rule):
    """
    What it repairs:
        A ``tool_use`` whose ``input`` is not a JSON object: the arguments replayed as the JSON
        text they streamed in as, a string cut off mid-stream, ``null``, a list, or no input
        at all.

    Why:
        Anthropic checks the input's type before anything else in the transcript:
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary"

    Example:
        Before: assistant [tool_use toolu_1 "Bash", input "{\\"command\\": \\"ls -"]
        After:  assistant [tool_use toolu_1 "Bash", input {}]
        Before: assistant [tool_use toolu_2 "query", input "{\\"query\\": \\"weather\\"}"]
        After:  assistant [tool_use toolu_2 "query", input {"query": "weather"}]

    Safety:
        JSON text that holds an object is parsed back into that object, so nothing is lost.
        Anything else becomes ``{}``, and the original input is kept, verbatim, in the repair
        record. The call's id, name and result are untouched.
    """

    code = "AN012"
    name = "tool-input-not-object"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A18",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != CALL or isinstance(part.raw.get("input"), dict):
                    continue
                original = part.raw.get("input")
                parsed = _object_in(original)
                entry.parts[n] = Part(CALL, {**part.raw, "input": parsed or {}}, part.call_id, part.name)
                entry.dirty = True
                if parsed is not None:
                    action, detail = "parsed", "parsed the tool_use input, sent as JSON text, into the object it holds"
                elif "input" in part.raw:
                    action = "replaced"
                    detail = f"replaced a tool_use input that is not an object with {{}}; it was: {ctx.describe(part)}"
                else:
                    action, detail = "added", "gave a tool_use without input an empty input {}"
                ctx.report(self, action, entry, part.call_id, detail)


def _object_in(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None
