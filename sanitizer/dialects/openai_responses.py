"""OpenAI Responses: ``input`` is a flat list of items; calls and their outputs are items of their own.

The model's items of one turn (``reasoning``, ``function_call``, ``custom_tool_call``) are grouped
into one assistant entry, so the outputs of a parallel batch form one zone after it, as tool
messages do in Chat. Rendering flattens the entries back into items.
"""

from __future__ import annotations

import re
from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, TEXT, THINKING, Entry, Part, Transcript
from ._base import Dialect
from ._shape import messages_of, require_id, require_object, type_name

_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_OUTPUTS = frozenset(_CALLS.values())
_ROLES = ("user", "assistant", "system", "developer")
_GROUPED = frozenset(("reasoning", *_CALLS))
# A reasoning item belongs to the item after it, the one it produced.
_LEADING = frozenset((THINKING,))
# The item ids OpenAI gives outputs: any other id (a call id copied there) makes the server ignore
# the output.
OUTPUT_ID_PREFIX = {"function_call_output": "fco_", "custom_tool_call_output": "ctco_"}
# Items the model produces, which a reasoning item may precede.
PRODUCED = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "computer_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "tool_search_call",
    }
)
# OpenAI's reasoning models (o-series, gpt-5, codex), under any gateway prefix; gpt-5-chat is not
# one. They produce a reasoning item before every call, and the server wants it replayed with the
# call's ``fc_`` id.
_REASONING_MODEL = re.compile(r"^(?:[\w.-]+/)?(?:o[1-9]|gpt-5|codex)(?!.*-chat)", re.IGNORECASE)


# What OpenAI takes for an item id: letters, digits, underscores and dashes (the empty string is not one).
_ITEM_ID = re.compile(r"[A-Za-z0-9_-]+")


def valid_item_id(ident: str) -> bool:
    return _ITEM_ID.fullmatch(ident) is not None


# The prefix OpenAI gives each kind of item's id; an id of another shape is refused (R12).
ID_PREFIX = {"message": "msg", "function_call": "fc", "reasoning": "rs"}


def misnamed_item_id(item: dict[str, Any]) -> bool:
    """An item ``id`` OpenAI cannot take: not letters, digits, ``_`` and ``-``, or not the prefix
    OpenAI gives that kind of item (the Agents SDK's ``__fake_id__``)."""
    ident = item.get("id")
    if type(ident) is not str:
        return False
    kind = item.get("type", "message")
    prefix = ID_PREFIX.get(kind) if type(kind) is str else None
    return not valid_item_id(ident) or (prefix is not None and not ident.startswith(prefix))


def chained(body: dict[str, Any]) -> bool:
    """The request continues a stored response chain or a conversation."""
    return body.get("previous_response_id") is not None or body.get("conversation") is not None


def reasoning_model(model: object) -> bool:
    return isinstance(model, str) and _REASONING_MODEL.match(model) is not None


def stored_reasoning(item: dict[str, Any]) -> bool:
    """A reasoning item the server must look up by its id: it carries no encrypted content."""
    encrypted = item.get("encrypted_content")
    return item.get("type") == "reasoning" and not (type(encrypted) is str and encrypted)


def follows_reasoning(reasoning: dict[str, Any], item: Any) -> bool:
    """Whether ``item`` can be what ``reasoning`` produced: an item of the model's (a call, an
    assistant message), with its item id when the reasoning is a stored one, since the server
    pairs the two by id; or a reference to a stored item."""
    if type(item) is not dict:
        return False
    kind = item.get("type", "message")
    if kind == "item_reference":
        return True
    if kind not in PRODUCED and not (kind == "message" and item.get("role") == "assistant"):
        return False
    ident = item.get("id")
    return (type(ident) is str and bool(ident)) or not stored_reasoning(reasoning)


def foreign_output_id(item: dict[str, Any]) -> bool:
    """An output carrying an item ``id`` that is not an output item id."""
    ident = item.get("id")
    prefix = "ctco_" if item.get("type") == "custom_tool_call_output" else "fco_"
    return type(ident) is str and bool(ident) and not ident.startswith(prefix)


class OpenAIResponses(Dialect):
    api = "openai-responses"
    result_role = "tool"

    def looks_clean(self, body: dict[str, Any]) -> bool:
        items = body.get("input")
        if items is None or type(items) is str:
            return True
        if type(items) is not list:
            return False
        in_chain = chained(body)
        pending: set[Any] = set()
        seen: set[Any] = set()
        # A clean body holds no reasoning item, so in a reasoning model's body an item id on a
        # call or an assistant answer may be an fc_ or msg_ id replayed without its reasoning.
        ids_need_reasoning = reasoning_model(body.get("model")) and not in_chain
        ids: set[str] = set()
        add_id = ids.add
        previous = None
        for item in items:
            if type(item) is not dict:
                return False
            kind = item.get("type", "message")
            ident = item.get("id")
            if ident is not None:
                # Membership tests hash: an id (or a type) that is not a string is for parse() to reject.
                if type(ident) is not str or ident in ids or misnamed_item_id(item):
                    return False
                add_id(ident)
            # Messages first: most items are.
            if kind == "message":
                if pending or item.get("role") not in _ROLES:
                    return False
                if ids_need_reasoning and ident is not None and item.get("role") == "assistant":
                    return False
            elif type(kind) is not str:
                return False
            elif kind in _CALLS:
                call_id = item.get("call_id")
                if previous in _OUTPUTS or type(call_id) is not str or not call_id or call_id in seen:
                    return False
                if item.get("name") == "":
                    return False  # a name lost on the way: unnamed-tool-call
                if ids_need_reasoning and ident is not None:
                    return False
                seen.add(call_id)
                pending.add(call_id)
            elif kind in _OUTPUTS:
                answered = item.get("call_id")
                if type(answered) is not str or (ident is not None and foreign_output_id(item)):
                    return False
                if answered in pending:
                    pending.discard(answered)
                elif not in_chain:
                    return False
            elif kind == "tool_search_call" and type(item.get("arguments")) is str:
                return False  # arguments sent as text: tool-search-arguments-not-object
            elif pending or kind == "reasoning" or kind == "item_reference":
                # Reasoning items, references to stored items and calls still waiting for outputs
                # take the careful path.
                return False
            previous = kind
        return not pending

    def history_elsewhere(self, body: dict[str, Any]) -> bool:
        """With ``previous_response_id`` or a ``conversation``, earlier items (calls an output
        answers, reasoning a call was produced with) live on the server, not in ``input``; an
        ``item_reference`` brings in a stored item whose call id the body does not show."""
        if chained(body):
            return True
        items = body.get("input")
        return type(items) is list and any(type(i) is dict and i.get("type") == "item_reference" for i in items)

    def history_still_elsewhere(self, transcript: Transcript) -> bool:
        # An item_reference the server cannot resolve (store: false) is gone after unstored-item:
        # what it brought in is then not in the request at all.
        if chained(transcript.body):
            return True
        return any(type(p.raw) is dict and p.raw.get("type") == "item_reference" for _, p in transcript.parts())

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
        return Transcript(entries, body, key="input", leading_kinds=_LEADING)

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

    def text_entry(self, role: str, text: str) -> Entry:
        item = {"type": "message", "role": role, "content": text}
        return Entry(role, [Part(TEXT, item)], item, None, dirty=True)

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
