"""OpenAI Responses: ``input`` is a flat list of items; calls and their outputs are items of their own.

The model's items of one turn (``reasoning``, ``function_call``, ``custom_tool_call``) are grouped
into one assistant entry, so the outputs of a parallel batch form one zone after it, as tool
messages do in Chat. Rendering flattens the entries back into items.
"""

from __future__ import annotations

from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, TEXT, THINKING, Entry, Part, Transcript
from ._base import Dialect
from ._shape import messages_of, require_id, require_object, type_name

_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_OUTPUTS = frozenset(_CALLS.values())
_ROLES = ("user", "assistant", "system", "developer")
_GROUPED = frozenset(("reasoning", *_CALLS))


class OpenAIResponses(Dialect):
    api = "openai-responses"
    result_role = "tool"

    def looks_clean(self, body: dict[str, Any]) -> bool:
        items = body.get("input")
        if items is None or type(items) is str or body.get("previous_response_id") is not None:
            return True
        if type(items) is not list:
            return False
        pending: set[Any] = set()
        seen: set[Any] = set()
        previous = None
        for item in items:
            if type(item) is not dict:
                return False
            kind = item.get("type", "message")
            # Membership tests hash: a type or id that is not a string is for parse() to reject.
            if type(kind) is not str:
                return False
            if kind in _CALLS:
                call_id = item.get("call_id")
                if previous in _OUTPUTS or type(call_id) is not str or not call_id or call_id in seen:
                    return False
                seen.add(call_id)
                pending.add(call_id)
            elif kind in _OUTPUTS:
                answered = item.get("call_id")
                if type(answered) is not str or answered not in pending:
                    return False
                pending.discard(answered)
            elif pending or kind == "reasoning" or (kind == "message" and item.get("role") not in _ROLES):
                # Reasoning items and calls still waiting for outputs take the careful path.
                return False
            previous = kind
        return not pending

    def parse(self, body: dict[str, Any]) -> Transcript:
        entries: list[Entry] = []
        group: Entry | None = None
        # Reasoning belongs to the item it precedes: held back until that item is seen.
        reasoning: list[Part] = []
        first_reasoning = 0
        for index, raw in enumerate(messages_of(body, "input")):
            path = f"input[{index}]"
            item = require_object(raw, path)
            kind = item.get("type", "message")
            if not isinstance(kind, str):
                raise SanitizeError(f"{path}.type", f"must be a string, not {type_name(kind)}")
            if kind == "reasoning":
                if not reasoning:
                    first_reasoning = index
                reasoning.append(Part(THINKING, item))
                continue
            if kind in _CALLS:
                if group is None:
                    group = Entry("assistant", [], {}, first_reasoning if reasoning else index)
                    entries.append(group)
                call_id = require_id(item.get("call_id"), f"{path}.call_id")
                name = item.get("name")
                group.parts += [*reasoning, Part(CALL, item, call_id, name if isinstance(name, str) else None)]
                reasoning = []
                continue
            group = None
            origin = first_reasoning if reasoning else index
            if kind in _OUTPUTS:
                if reasoning:
                    entries.append(Entry("assistant", reasoning, {}, first_reasoning))
                    origin = index
                call_id = require_id(item.get("call_id"), f"{path}.call_id")
                entries.append(Entry("tool", [Part(RESULT, item, call_id)], item, origin))
            elif kind == "message":
                role = item.get("role")
                if role not in _ROLES:
                    raise SanitizeError(f"{path}.role", f"must be one of {', '.join(_ROLES)}, not {role!r}")
                entries.append(Entry(role, [*reasoning, Part(TEXT, item)], item, origin))
            else:
                entries.append(Entry("other", [*reasoning, Part(OTHER, item)], item, origin))
            reasoning = []
        if reasoning:
            entries.append(Entry("assistant", reasoning, {}, first_reasoning))
        return Transcript(entries, body, key="input")

    def render(self, transcript: Transcript) -> dict[str, Any]:
        body = dict(transcript.body)
        body.update(transcript.body_updates)
        body["input"] = [part.raw for entry in transcript.entries for part in entry.parts]
        return body

    def synthetic_result(self, call: Part, text: str) -> Part:
        assert call.call_id is not None
        kind = _CALLS.get(call.raw.get("type"), "function_call_output")
        return Part(RESULT, {"type": kind, "call_id": call.call_id, "output": text}, call.call_id)

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        return [Entry("tool", [part], part.raw, None, dirty=True) for part in parts]

    def with_call_id(self, part: Part, call_id: str) -> Part:
        return Part(part.kind, {**part.raw, "call_id": call_id}, call_id, part.name)

    def payload(self, part: Part) -> Any:
        if part.kind == CALL:
            return part.raw.get("arguments", part.raw.get("input"))
        return part.raw.get("output")

    def droppable(self, entry: Entry, calls: list[Part]) -> list[Part]:
        """The calls, and the reasoning items that led only to them.

        A reasoning item must be followed by the item it produced ("Item 'rs_1' of type
        'reasoning' was provided without its required following item."), so a run of reasoning
        goes with the calls after it when all of those calls go.
        """
        doomed = {id(c) for c in calls}
        drop: list[Part] = []
        segments: list[tuple[list[Part], list[Part]]] = []
        for part in entry.parts:
            if part.kind == THINKING and (not segments or segments[-1][1]):
                segments.append(([part], []))
            elif part.kind == THINKING:
                segments[-1][0].append(part)
            elif segments:
                segments[-1][1].append(part)
            else:
                segments.append(([], [part]))
        for thinking, produced in segments:
            gone = [p for p in produced if id(p) in doomed]
            drop += gone
            if gone and len(gone) == len(produced):
                drop += thinking
        return drop


DIALECT = OpenAIResponses()
