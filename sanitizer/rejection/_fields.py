"""The keys a refusal says the provider does not accept, and how to take them out of a transcript.

Providers word an unaccepted key in a few ways, each naming it by a path from the body's root in
its own notation: pydantic's (``messages.0.user.name``, or a ``loc`` tuple ``('body', 'messages',
0, 'typed-dict', 'id')``), OpenAI's (``'messages[1].tool_calls[0].index'``), Gemini's (the key
apart from the path of what holds it, in proto's snake_case), or the key alone (serde's "unknown
field", Azure's "Unrecognized request argument supplied"). :func:`refused_fields` reads all of
them into one form; :func:`strip` takes a key out of a message, copy on write.

A path from a message down to a key is written, for a person and in a lesson, the way the
providers write it with the indexes left out: ``cot_id`` (a key of the message),
``content[].cache_control`` (of each of its content blocks), ``assistant.reasoning_content`` (of
an assistant message: a provider's path may name the role or a block's type on the way, and it
is kept, so the key goes where the provider refused it), ``*.cache_control`` (anywhere in the
message, as Anthropic writes it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

Segment = str | int | None
"""A step of a path: a key (or a role or block type the provider names on the way), an index, or
None for every element of a list (``[]``)."""

ANYWHERE = "*"

# Each wording of an unaccepted key, in the order a refusal is read. Quotes may come escaped (a
# gateway that nests the provider's JSON body in its own message).
_EXTRA_LOC = re.compile(r"extra_forbidden\W{1,12}loc\W{1,6}?[\[(]([^\])]*)[\])]")
_EXTRA_FIELD = re.compile(r"Extra inputs are not permitted, field: '([^']+)'")
_EXTRA_BEFORE = re.compile(r"([\w*][\w.*\[\]-]*):?\s+Extra inputs are not permitted(?!, field)")
_UNKNOWN_PARAMETER = re.compile(r"Unknown parameter: '([^']+)'")
_UNKNOWN_NAME = re.compile(r"Unknown name \\*\"([^\"\\]+)\\*\"(?: at '([^']+)')?: Cannot find field")
_UNKNOWN_FIELD = re.compile(r"(?:([\w.\[\]]+): )?unknown field `([^`]+)`")
_UNSUPPORTED = re.compile(r"(?:\('([^']+)'\s*:\s*)?property '([^']+)' is unsupported")
_UNRECOGNIZED = re.compile(r"Unrecognized request arguments? supplied: ([\w.\[\], -]+)")
_TOKEN = re.compile(r"\[(\d*)\]|([^.\[\]]+)")
# Words a provider's path carries that are no key of the body: FastAPI's root, pydantic's name for a
# TypedDict branch, AWS's list members; and the model class of a union branch pydantic checked
# (``messages.0.ChatCompletionMessageGenericParam.content``, sgl-project/sglang#17853), a PascalCase
# word no body key is spelled in (Gemini's and Bedrock's are camelCase).
_WRAPPERS = frozenset({"body", "typed-dict", "member"})
_MODEL_CLASS = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)*")
_TRANSCRIPT_KEYS = frozenset({"messages", "contents", "input"})

# Keys that carry the conversation, never removed whatever a refusal says: a message's role,
# content and calls, a block's kind and payload, a call's or result's id, name and data.
CONVERSATION_KEYS = frozenset(
    {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "parts",
        "type",
        "call_id",
        "tool_use_id",
        "toolUseId",
        "function",
        "functionCall",
        "functionResponse",
        "function_call",
        "function_response",
        "toolUse",
        "toolResult",
        "image_url",
        "input_audio",
        "file",
        "image",
        "document",
        "video",
        "source",
        "inlineData",
        "inline_data",
        "fileData",
        "file_data",
        "reasoningContent",
        "thinking",
        "data",
        "summary",
        *("arguments", "args", "input", "output", "response"),
    }
)
# What a tool was called with or returned: its keys are the tool's own, never the provider's schema.
_TOOL_DATA = frozenset({"arguments", "args", "input", "output", "response"})
_TEXT_TYPES = (None, "text", "input_text", "output_text")


@dataclass(frozen=True, slots=True)
class RefusedField:
    """A key the provider said it does not accept, by the path from the body's root it gave."""

    path: tuple[str | int, ...]
    """Ending with the key; a lone key when the refusal gave no path; ``("*", key)`` for anywhere."""

    @property
    def key(self) -> str:
        return str(self.path[-1])

    def message(self) -> int | None:
        """The index of the message the path goes through, if it names one."""
        if len(self.path) > 2 and self.path[0] in _TRANSCRIPT_KEYS and isinstance(self.path[1], int):
            return self.path[1]
        return None

    def within_message(self) -> tuple[Segment, ...]:
        """The steps from the message to the object holding the key (after :meth:`message`)."""
        return tuple(self.path[2:-1])

    def anywhere(self) -> bool:
        return len(self.path) == 2 and self.path[0] == ANYWHERE

    def lone(self) -> bool:
        """The key alone, where the refusal gave no path: a request parameter or a message's key."""
        return len(self.path) == 1

    def lesson_key(self) -> str | None:
        """The path from a message to the key, as a lesson keeps it; None outside the transcript."""
        if self.anywhere() or self.lone():
            return f"{ANYWHERE}.{self.key}"
        if self.message() is None:
            return None
        return render_path((*self.within_message(), self.key))


def refused_fields(message: str) -> list[RefusedField]:
    """Every key ``message`` says the provider does not accept, once each."""
    found: list[tuple[str | int, ...]] = []
    for loc in _EXTRA_LOC.finditer(message):
        found.append(tuple(_loc_item(i) for i in loc[1].split(",") if _loc_item(i) != ""))
    for pattern in (_EXTRA_FIELD, _EXTRA_BEFORE, _UNKNOWN_PARAMETER):
        found += [parse_path(m[1]) for m in pattern.finditer(message)]
    for m in _UNKNOWN_NAME.finditer(message):
        found.append((*(parse_path(m[2]) if m[2] else ()), m[1]))
    for m in _UNKNOWN_FIELD.finditer(message):
        found.append((*(parse_path(m[1]) if m[1] else ()), m[2]))
    for m in _UNSUPPORTED.finditer(message):
        found.append((*parse_path(m[1]), m[2]) if m[1] else parse_path(m[2]))
    for m in _UNRECOGNIZED.finditer(message):
        found += [parse_path(name.strip()) for name in m[1].split(",") if name.strip()]
    unique: dict[tuple[str | int, ...], None] = {}
    for path in found:
        cleaned = tuple(
            s for s in path if s not in _WRAPPERS and not (isinstance(s, str) and _MODEL_CLASS.fullmatch(s))
        )
        if cleaned and isinstance(cleaned[-1], str):
            unique[cleaned] = None
    return [RefusedField(p) for p in unique]


def parse_path(text: str) -> tuple[Any, ...]:
    """``messages[1].tool_calls[0].index`` or ``messages.0.user.name`` as steps; ``[]`` is None."""
    steps: list[Segment] = []
    for index, name in _TOKEN.findall(text):
        if name:
            steps.append(int(name) if name.isdigit() else name)
        else:
            steps.append(int(index) if index else None)
    return tuple(steps)


def render_path(steps: Sequence[Segment]) -> str:
    """The steps as a lesson writes them: keys joined by dots, each index (any) as ``[]``."""
    out = ""
    for step in steps:
        if isinstance(step, str):
            out += f".{step}" if out else step
        else:
            out += "[]"
    return out


def _loc_item(raw: str) -> str | int:
    item = raw.strip().strip("\\'\" ")
    return int(item) if item.isdigit() else item


def kept(node: dict[str, Any], key: str) -> bool:
    """Whether ``key`` of ``node`` carries the conversation (and stays whatever a refusal says)."""
    if key in CONVERSATION_KEYS:
        return True
    if key == "text":
        # A text block's words; on another block (a tool_use) a stray key.
        return node.get("type") in _TEXT_TYPES
    if key == "name":
        # The name of what was called (a message's own name is a participant's, and may go).
        return not _TOOL_DATA.isdisjoint(node)
    if key == "id":
        # The id a call is paired with its result by (OpenAI's tool call, Anthropic's tool_use, a
        # Responses item); a message's stray id, or Gemini's functionCall.id, may go.
        return "function" in node or "type" in node
    return False


def spellings(key: str) -> tuple[str, ...]:
    """The key as written, and in camelCase: Gemini names fields by proto's snake_case path whatever
    spelling the body used (``thought_signature`` for ``thoughtSignature``)."""
    head, *rest = key.split("_")
    camel = head + "".join(w[:1].upper() + w[1:] for w in rest)
    return (key, camel) if camel != key else (key,)


def strip(node: Any, steps: Sequence[Segment], key: str) -> tuple[Any, list[Any]]:
    """``node`` without ``key`` where ``steps`` lead (None: every element of a list), copied where
    it changes; the values removed.

    A step that is no key of the object there but its role or type (a provider's path names
    which branch of its schema it checked: ``messages.2.assistant.reasoning_content``,
    ``content.1.tool_use.text``) is passed over, and matches only objects of that role or type.
    """
    if not steps:
        return _without(node, key)
    step, rest = steps[0], steps[1:]
    if isinstance(node, list) and step is None:
        return _each(node, lambda item: strip(item, rest, key))
    if not isinstance(node, dict) or not isinstance(step, str):
        return node, []
    if step in _TOOL_DATA:
        return node, []
    name = next((s for s in spellings(step) if isinstance(node.get(s), (dict, list))), None)
    if name is not None:
        new, removed = strip(node[name], rest, key)
        return ({**node, name: new}, removed) if removed else (node, [])
    if step in (node.get("type"), node.get("role")):
        return strip(node, rest, key)
    return node, []


def strip_anywhere(node: Any, key: str) -> tuple[Any, list[Any]]:
    """``node`` without ``key`` wherever it holds it (never inside a tool's own data)."""
    if isinstance(node, list):
        return _each(node, lambda item: strip_anywhere(item, key))
    if not isinstance(node, dict):
        return node, []
    current, removed = _without(node, key)
    changed: dict[str, Any] = {}
    for name, value in current.items():
        if name in _TOOL_DATA or not isinstance(value, (dict, list)):
            continue
        new, inner = strip_anywhere(value, key)
        if inner:
            changed[name] = new
            removed += inner
    return ({**current, **changed} if changed else current), removed


def _without(node: Any, key: str) -> tuple[Any, list[Any]]:
    if not isinstance(node, dict):
        return node, []
    names = [s for s in spellings(key) if s in node and not kept(node, s)]
    if not names:
        return node, []
    return {k: v for k, v in node.items() if k not in names}, [node[n] for n in names]


def _each(items: list[Any], change: Callable[[Any], tuple[Any, list[Any]]]) -> tuple[list[Any], list[Any]]:
    removed: list[Any] = []
    out = []
    for item in items:
        new, inner = change(item)
        out.append(new)
        removed += inner
    return (out, removed) if removed else (items, [])


def holds(node: Any, key: str) -> bool:
    """Whether ``key`` (in either spelling) is a key of some object in ``node``, tool data aside."""
    names = spellings(key)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if any(n in current for n in names):
                return True
            stack += [v for k, v in current.items() if k not in _TOOL_DATA and isinstance(v, (dict, list))]
        elif isinstance(current, list):
            stack += [v for v in current if isinstance(v, (dict, list))]
    return False


def fields_in(message: str, body: dict[str, Any], transcript_key: str) -> Iterator[RefusedField]:
    """The keys ``message`` refuses that ``body``'s transcript holds where it says (a lone key the
    body holds at its top level is a request parameter, not the transcript's)."""
    items = body.get(transcript_key)
    messages = items if isinstance(items, list) else []
    for field in refused_fields(message):
        index = field.message()
        if index is not None and field.path[0] == transcript_key:
            if index < len(messages):
                yield field
        elif (field.anywhere() or (field.lone() and field.key not in body)) and holds(messages, field.key):
            yield field
