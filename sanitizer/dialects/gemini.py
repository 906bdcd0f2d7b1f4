"""Gemini ``generateContent``: ``contents`` of ``user`` and ``model`` turns holding ``parts``.

A ``functionCall`` part is answered by a ``functionResponse`` part in the next user turn. Ids are
optional: where they are missing, a response is matched to the call of the latest call turn with
the same name, in order, under an internal id that is never written back.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, TEXT, THINKING, Entry, Part, Transcript
from ._base import Dialect
from ._shape import messages_of, require_object, require_sides, type_name

_ROLES = ("user", "model", "function")
# Roles Gemini refuses whose meaning is known, read as what they stand for so GM007 can rename or
# move them: an OpenAI-style ``assistant`` is the model, ``system`` and ``developer`` are
# instructions. Any other role is a shape error.
_MODEL_ROLES = ("model", "assistant")
_SYSTEM_ROLES = ("system", "developer")
_INTERNAL = "\x00"
# The API reads proto JSON, where a field may be spelt in camelCase or snake_case.
_CALL_KEYS = ("functionCall", "function_call")
_RESPONSE_KEYS = ("functionResponse", "function_response")
# A Part's data is a oneof: one of these fields must be set. Proto3 JSON reads an empty string, or
# null, as unset (router-for-me/CLIProxyAPI#3485).
_DATA_KEYS = (
    "text",
    *_CALL_KEYS,
    *_RESPONSE_KEYS,
    "inlineData",
    "inline_data",
    "fileData",
    "file_data",
    "executableCode",
    "executable_code",
    "codeExecutionResult",
    "code_execution_result",
)
# The other fields a Part has: they say something about its data, they are not data.
_PART_KEYS = frozenset(
    (
        *_DATA_KEYS,
        "thought",
        "thoughtSignature",
        "thought_signature",
        "videoMetadata",
        "video_metadata",
        "partMetadata",
        "part_metadata",
        "mediaResolution",
        "media_resolution",
    )
)


class Gemini(Dialect):
    api = "gemini"
    result_role = "user"
    results_share_message = True
    results_span_messages = False

    def looks_clean(self, body: dict[str, Any]) -> bool:
        contents = body.get("contents")
        if type(contents) is not list or not contents:
            return False
        waiting: list[tuple[Any, Any]] | None = None
        ids: set[Any] = set()
        previous_role = None
        for content in contents:
            parts = content.get("parts") if type(content) is dict else None
            if type(parts) is not list or not parts or any(type(p) is not dict or without_data(p) for p in parts):
                return False
            role = content.get("role", "user")
            calls = [(c.get("name"), c.get("id")) for c in map(_call_of, parts) if c is not None]
            responses = [a for a in map(_response_of, parts) if a is not None]
            if any(type(a.get("response", {})) is not dict for a in responses):
                return False
            answers = [(a.get("name"), a.get("id")) for a in responses]
            if waiting is not None:
                if role == "model" or sorted(map(str, answers)) != sorted(map(str, waiting)):
                    return False
                if any(_response_of(p) is None for p in parts[: len(answers)]):
                    return False
                waiting = None
            elif answers:
                return False
            if role == "model" and calls:
                # A call turn comes right after a user or function-response turn, never first.
                if previous_role not in ("user", "function"):
                    return False
                if any(i is not None and (type(i) is not str or i in ids) for _, i in calls):
                    return False
                ids.update(i for _, i in calls)
                waiting = calls
            elif role not in _ROLES or (role == "model" and answers) or (role != "model" and calls):
                return False
            previous_role = role
        # A request may not end on a model turn (and one ending on calls waits for their answers).
        return waiting is None and previous_role != "model"

    def parse(self, body: dict[str, Any]) -> Transcript:
        contents = [self._content(raw, index) for index, raw in enumerate(messages_of(body, "contents"))]
        # Every call gets a key of its own (its position, plus its id if it has one): Gemini ids
        # are optional and may repeat, so pairing goes by key. A response with an id answers the
        # first unanswered call before it with that id (or the first after it, if it came early); one
        # without answers the first open call of that name in the latest call turn.
        calls_by_id: dict[str, _SameId] = {}
        for index, (_, parts) in enumerate(contents):
            for part in parts:
                if part.kind == CALL and part.call_id is not None:
                    real = self.public_id(part.call_id)
                    if real is not None:
                        calls_by_id.setdefault(real, _SameId()).calls.append((index, part.call_id))
        entries = []
        answered: set[str] = set()
        open_calls = _OpenCalls([])
        for index, (content, parts) in enumerate(contents):
            turn_calls = [(p.name, p.call_id) for p in parts if p.kind == CALL and p.call_id is not None]
            if turn_calls:
                open_calls = _OpenCalls(turn_calls)
            for k, part in enumerate(parts):
                if part.kind != RESULT:
                    continue
                real = part.call_id
                same_id = calls_by_id.get(real) if real else None
                key = same_id.answer(index, answered) if same_id is not None else None
                if key is not None:
                    open_calls.close(key)
                else:
                    key = open_calls.match(part.name) if not real else None
                part.call_id = key or f"{_INTERNAL}?{index}:{k}:{real or ''}"
                answered.add(part.call_id)
            role = content.get("role", "user")
            require_sides(
                parts,
                "model" if role in _MODEL_ROLES else "user",
                f"contents[{index}].parts",
                caller="model",
                answerer="user",
            )
            entries.append(Entry(_entry_role(role), parts, content, index))
        return Transcript(entries, body, key="contents")

    @staticmethod
    def _content(raw: Any, index: int) -> tuple[dict[str, Any], list[Part]]:
        path = f"contents[{index}]"
        content = require_object(raw, path)
        role = content.get("role", "user")
        if role not in _ROLES and role not in _MODEL_ROLES and role not in _SYSTEM_ROLES:
            raise SanitizeError(f"{path}.role", f"must be 'user' or 'model', not {role!r}")
        raw_parts = content.get("parts", [])
        if not isinstance(raw_parts, list):
            raise SanitizeError(f"{path}.parts", f"must be an array, not {type_name(raw_parts)}")
        parts = []
        for k, item in enumerate(raw_parts):
            part = require_object(item, f"{path}.parts[{k}]")
            call_key = _key(part, _CALL_KEYS)
            response_key = _key(part, _RESPONSE_KEYS)
            if call_key:
                call = require_object(part[call_key], f"{path}.parts[{k}].{call_key}")
                parts.append(Part(CALL, part, f"{_INTERNAL}{index}:{k}:{_real_id(call) or ''}", _name(call)))
            elif response_key:
                answer = require_object(part[response_key], f"{path}.parts[{k}].{response_key}")
                # The response's own id for now; parse() replaces it with the key of the call it answers.
                parts.append(Part(RESULT, part, _real_id(answer), _name(answer)))
            elif part.get("thought") is True:
                parts.append(Part(THINKING, part))
            elif "text" in part:
                parts.append(Part(TEXT, part))
            else:
                parts.append(Part(OTHER, part))
        return content, parts

    def render(self, transcript: Transcript) -> dict[str, Any]:
        return transcript.render(lambda e: {**e.source, "parts": [p.raw for p in e.parts]} if e.dirty else e.source)

    def synthetic_result(self, call: Part, text: str) -> Part:
        assert call.call_id is not None
        # The response names the call exactly as it was named, so id-less pairing finds it again.
        answer: dict[str, Any] = {} if call.name is None else {"name": call.name}
        answer["response"] = {"error": text}
        real = self.public_id(call.call_id)
        if real is not None:
            answer["id"] = real
        return Part(RESULT, {"functionResponse": answer}, call.call_id, call.name)

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        return [Entry("user", parts, {"role": "user"}, None, dirty=True)]

    def with_call_id(self, part: Part, call_id: str) -> Part:
        key = _key(part.raw, _CALL_KEYS if part.kind == CALL else _RESPONSE_KEYS)
        raw = {**part.raw, key: {**part.raw[key], "id": call_id}}
        return Part(part.kind, raw, call_id, part.name)

    def public_id(self, call_id: str | None) -> str | None:
        """The id the client gave the call, if any: the part of the key after its position."""
        if call_id is None or not call_id.startswith(_INTERNAL):
            return call_id
        return call_id.split(":", 2)[2] or None

    def payload(self, part: Part) -> Any:
        key = _key(part.raw, _CALL_KEYS if part.kind == CALL else _RESPONSE_KEYS)
        return part.raw[key].get("args" if part.kind == CALL else "response")

    def text_entry(self, role: str, text: str) -> Entry:
        return Entry(
            role, [Part(TEXT, {"text": text})], {"role": "model" if role == "assistant" else role}, None, dirty=True
        )


def unsigned_calls(body: dict[str, Any]) -> bool:
    """Whether a model turn's first ``functionCall`` part has no thought signature (Gemini 3 wants one).

    For a body ``looks_clean`` passed: contents are objects holding lists of objects.
    """
    for content in body["contents"]:
        if content.get("role") != "model":
            continue
        for part in content["parts"]:
            if "functionCall" in part or "function_call" in part:
                if not signed(part):
                    return True
                break
    return False


def without_data(part: dict[str, Any]) -> bool:
    """Whether a part of known fields sets none of its data (``{}``, ``{"text": ""}``): Gemini
    refuses it. A part with a field Gemini does not know is refused for that field instead."""
    if not part.keys() <= _PART_KEYS:
        return False
    return all(part.get(key) is None or (key == "text" and part[key] == "") for key in _DATA_KEYS)


def nested_response_parts(body: dict[str, Any]) -> bool:
    """Whether a ``functionResponse`` carries parts of its own (files, Gemini 3's multimodal responses).

    For a body ``looks_clean`` passed: contents are objects holding lists of objects.
    """
    return any(
        (answer := _response_of(part)) is not None and type(answer.get("parts")) is list and bool(answer["parts"])
        for content in body["contents"]
        for part in content["parts"]
    )


def first_call_index(body: dict[str, Any]) -> int | None:
    """The index of the first model content that calls a function, if any.

    For a body ``looks_clean`` passed: contents are objects holding lists of objects.
    """
    for index, content in enumerate(body["contents"]):
        if content.get("role") == "model" and any(_call_of(part) is not None for part in content["parts"]):
            return index
    return None


def text_beside_responses(content: dict[str, Any]) -> bool:
    """Whether a user content holds a text part next to its ``functionResponse`` parts.

    For a content of a body ``looks_clean`` passed: an object holding a list of objects.
    """
    parts = content["parts"]
    return any(_response_of(p) is not None for p in parts) and any(
        "text" in p and p.get("thought") is not True and _call_of(p) is None and _response_of(p) is None for p in parts
    )


def signed(part: dict[str, Any]) -> bool:
    """Whether a part carries a thought signature (proto JSON: either spelling of the field)."""
    signature = part.get("thoughtSignature", part.get("thought_signature"))
    return isinstance(signature, str) and signature != ""


def _entry_role(role: str) -> str:
    if role in _MODEL_ROLES:
        return "assistant"
    return "system" if role in _SYSTEM_ROLES else "user"


def _key(part: dict[str, Any], spellings: tuple[str, str]) -> str:
    """Which spelling of the field ``part`` uses ("" when it has neither)."""
    return next((k for k in spellings if k in part), "")


def _call_of(part: dict[str, Any]) -> dict[str, Any] | None:
    value = part.get(_key(part, _CALL_KEYS))
    return value if type(value) is dict else None


def _response_of(part: dict[str, Any]) -> dict[str, Any] | None:
    value = part.get(_key(part, _RESPONSE_KEYS))
    return value if type(value) is dict else None


def _name(value: dict[str, Any]) -> str | None:
    name = value.get("name")
    return name if isinstance(name, str) else None


def _real_id(value: dict[str, Any]) -> str | None:
    ident = value.get("id")
    return ident if isinstance(ident, str) and ident else None


class _SameId:
    """The calls that share one id, in order, and how far the answers have got through them.

    Answers are paired in content order and an answered call stays answered, so both cursors
    only move forward: pairing every answer costs O(calls) in all, however often ids repeat.
    """

    __slots__ = ("before", "calls", "first_open")

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []
        # How many calls sit in contents before the answer being paired, and the first of those
        # that may still be open (every call before it is answered).
        self.before = 0
        self.first_open = 0

    def answer(self, index: int, answered: set[str]) -> str:
        """The first unanswered call before ``index`` (else the last one before, or the first after)."""
        calls = self.calls
        while self.before < len(calls) and calls[self.before][0] < index:
            self.before += 1
        while self.first_open < self.before and calls[self.first_open][1] in answered:
            self.first_open += 1
        if self.first_open < self.before:
            return calls[self.first_open][1]
        return calls[self.before - 1][1] if self.before else calls[0][1]


class _OpenCalls:
    """The calls of the latest call turn that no answer has taken yet, found by name in call order."""

    def __init__(self, calls: list[tuple[str | None, str]]) -> None:
        self._open = {key for _, key in calls}
        self._by_name: dict[str | None, deque[str]] = {}
        for name, key in calls:
            self._by_name.setdefault(name, deque()).append(key)

    def close(self, key: str) -> None:
        self._open.discard(key)

    def match(self, name: str | None) -> str | None:
        """The first still-open call with this name (then closed)."""
        queue = self._by_name.get(name)
        while queue:
            key = queue.popleft()
            if key in self._open:
                self._open.discard(key)
                return key
        return None


DIALECT = Gemini()
