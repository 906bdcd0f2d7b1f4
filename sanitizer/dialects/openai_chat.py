"""OpenAI Chat Completions: calls live in ``assistant.tool_calls``, each result is a ``tool`` message."""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, TEXT, Entry, Part, Transcript
from ._base import CLEAN, Dialect
from ._shape import messages_of, require_id, require_object, type_name

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_ROLE_SET = frozenset(ROLES)
_PLAIN_ROLES = frozenset(("system", "developer", "user"))
# What the quick read suspects (Dialect.suspects), by what it saw. A tool message that answers no
# call awaiting one: a result answering nothing, answered twice, or out of place (after a message
# interposed, or before its call).
_OUT_OF_PLACE_RESULT = ("TP004", "TP005", "TP002", "TP003")
# A call whose results do not all follow it. Those that turn up later, or came before it, are out
# of place where they stand; this one may have none.
_UNANSWERED_CALL = ("TP001",)
_REUSED_CALL_ID = ("TP007", "TP006")
_BAD_CALL_NAME = ("OA007", "OA008")
NAME = re.compile(r"[a-zA-Z0-9_-]+")
"""What OpenAI accepts as a participant's or a called function's name (its '^[a-zA-Z0-9_-]+$')."""


def refused_name(name: Any) -> TypeGuard[str]:
    """A non-empty name with characters outside :data:`NAME` (an empty one is unnamed-tool-call's)."""
    return type(name) is str and name != "" and NAME.fullmatch(name) is None


class OpenAIChat(Dialect):
    api = "openai-chat"
    result_role = "tool"

    def looks_clean(self, body: dict[str, Any]) -> bool:
        return self.suspects(body) == CLEAN

    def suspects(self, body: dict[str, Any]) -> frozenset[str] | None:
        messages = body.get("messages")
        if type(messages) is not list or not messages:
            # No message at all: the full pass says whether there is a prompt to keep (empty-transcript).
            return None
        found: set[str] = set()
        pending: set[str] = set()
        calls_seen: set[str] = set()
        # Names already matched against OpenAI's pattern: a transcript repeats a few (its tools'),
        # and a set lookup costs less than the pattern.
        names_ok: set[Any] = set()
        # Subscripts in a try block instead of type tests per message: a message or call that is
        # not an object, a required field missing, an id or role that cannot be hashed, all fall
        # to the except clause, for parse() to reject or every rule to look at.
        try:
            for message in messages:
                role = message["role"]
                if "name" in message:
                    name = message["name"]
                    if name not in names_ok:
                        if type(name) is str and name and NAME.fullmatch(name) is None:
                            found.add("OA008")
                        else:
                            names_ok.add(name)
                if role == "tool":
                    # pending holds strings only, so membership also checks the id's type.
                    call_id = message["tool_call_id"]
                    if message["content"] is None:
                        found.add("OA002")
                    if call_id in pending:
                        pending.discard(call_id)
                    elif call_id is None:
                        found.add("OA003")
                    else:
                        found.update(_OUT_OF_PLACE_RESULT)
                        # An id OpenAI refuses is rewritten wherever it stands (provider-tool-id).
                        if type(call_id) is str and len(call_id) > 40:
                            found.add("PV001")
                    continue
                if pending:
                    found.update(_UNANSWERED_CALL)
                    pending.clear()
                content = message.get("content")
                if content is None:
                    # Only an assistant message that calls tools may leave its content null.
                    if role != "assistant":
                        found.add("OA002")
                elif type(content) is not str:
                    if type(content) is not list:
                        return None
                    # A plain loop: a generator's setup costs more than a list of one or two parts.
                    for item in content:
                        if type(item) is not dict:
                            return None
                if role == "assistant":
                    tool_calls = message.get("tool_calls")
                    if "function_call" in message:
                        # The legacy functions API: rare, so asked only when the key is there.
                        function_call = message["function_call"]
                        if function_call is not None:
                            if type(function_call) is not dict:
                                return None
                            if "arguments" not in function_call:
                                found.add("OA004")
                            if refused_name(function_call.get("name")):
                                found.add("OA008")
                    if tool_calls is None:
                        if content is None:
                            found.add("OA002")
                        continue
                    if type(tool_calls) is not list:
                        return None
                    if not tool_calls:
                        found.add("OA001")
                        continue
                    for call in tool_calls:
                        call_id = call["id"]
                        if type(call_id) is not str:
                            return None
                        if call_id in calls_seen:
                            found.update(_REUSED_CALL_ID)
                        function = call["function"]
                        arguments = function["arguments"]
                        if type(arguments) is not str:
                            # Arguments sent parsed: the careful path; of any other type, every rule.
                            if type(arguments) not in (dict, list):
                                return None
                            found.add("OA006")
                        name = function["name"]
                        if name not in names_ok:
                            # A name lost ("") or with characters OpenAI refuses: the careful path.
                            if type(name) is str and NAME.fullmatch(name) is None:
                                found.update(_BAD_CALL_NAME)
                            else:
                                names_ok.add(name)
                        calls_seen.add(call_id)
                        pending.add(call_id)
                elif role not in _PLAIN_ROLES:
                    return None
        except (TypeError, AttributeError, KeyError):
            return None
        if pending:
            found.update(_UNANSWERED_CALL)
        # Over 40 characters OpenAI refuses an id (provider-tool-id). One pass at the end costs
        # less than a test per call.
        if calls_seen and max(map(len, calls_seen)) > 40:
            found.add("PV001")
        return frozenset(found) if found else CLEAN

    def parse(self, body: dict[str, Any]) -> Transcript:
        # Field paths are spelled out only for an error, and the common shapes (a string content,
        # well-formed calls) are read inline: a long transcript is parsed on every turn of a
        # broken session.
        entries = []
        for index, message in enumerate(messages_of(body)):
            if type(message) is not dict:
                require_object(message, f"messages[{index}]")
            role = message.get("role")
            if type(role) is not str or role not in _ROLE_SET:
                raise SanitizeError(f"messages[{index}].role", f"must be one of {', '.join(ROLES)}, not {role!r}")
            if role == "tool":
                # A tool message without its id is a transcript fault the rules repair, not a shape error.
                call_id = message.get("tool_call_id")
                if call_id is not None and type(call_id) is not str:
                    require_id(call_id, f"messages[{index}].tool_call_id")
                parts = [Part(RESULT, message, call_id)]
            else:
                content = message.get("content")
                if type(content) is str:
                    parts = [Part(TEXT, content)] if content else []
                else:
                    parts = _content_parts(content, index)
                if role == "assistant":
                    tool_calls = message.get("tool_calls")
                    if tool_calls is not None:
                        parts += _call_parts(tool_calls, index)
            entries.append(Entry(role, parts, message, index))
        return Transcript(entries, body)

    def render(self, transcript: Transcript) -> dict[str, Any]:
        return transcript.render(_render_entry)

    def synthetic_result(self, call: Part, text: str) -> Part:
        assert call.call_id is not None
        return Part(RESULT, {"role": "tool", "tool_call_id": call.call_id, "content": text}, call.call_id)

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        return [Entry("tool", [part], part.raw, None, dirty=True) for part in parts]

    def with_call_id(self, part: Part, call_id: str) -> Part:
        key = "id" if part.kind == CALL else "tool_call_id"
        return Part(part.kind, {**part.raw, key: call_id}, call_id, part.name)

    def has_tool_definitions(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools"))

    def stub_tools(self, body: dict[str, Any], names: list[str], description: str) -> dict[str, Any]:
        tools = [
            {"type": "function", "function": {"name": n, "description": description, "parameters": {"type": "object"}}}
            for n in names
        ]
        return {"tools": tools} if "tool_choice" in body else {"tools": tools, "tool_choice": "none"}

    def text_entry(self, role: str, text: str) -> Entry:
        return Entry(role, [Part(TEXT, text)], {"role": role, "content": text}, None, dirty=True)

    def payload(self, part: Part) -> Any:
        if part.kind == CALL:
            function = part.raw.get("function")
            return function.get("arguments") if isinstance(function, dict) else None
        return part.raw.get("content") if isinstance(part.raw, dict) else part.raw


def _content_parts(content: Any, index: int) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(TEXT, content)] if content else []
    if not isinstance(content, list):
        raise SanitizeError(
            f"messages[{index}].content", f"must be a string, an array of parts or null, not {type_name(content)}"
        )
    parts = []
    for item, block in enumerate(content):
        if type(block) is not dict:
            require_object(block, f"messages[{index}].content[{item}]")
        parts.append(Part(TEXT if block.get("type") == "text" else OTHER, block))
    return parts


def _call_parts(tool_calls: Any, index: int) -> list[Part]:
    if not isinstance(tool_calls, list):
        raise SanitizeError(f"messages[{index}].tool_calls", f"must be an array, not {type_name(tool_calls)}")
    parts = []
    for item, call in enumerate(tool_calls):
        if type(call) is not dict:
            require_object(call, f"messages[{index}].tool_calls[{item}]")
        call_id = call.get("id")
        if type(call_id) is not str:
            require_id(call_id, f"messages[{index}].tool_calls[{item}].id")
        function = call.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        parts.append(Part(CALL, call, call_id, name if isinstance(name, str) else None))
    return parts


def _render_entry(entry: Entry) -> Any:
    if not entry.dirty:
        return entry.source
    if entry.role == "tool":
        return entry.parts[0].raw
    message = dict(entry.source)
    content = [p.raw for p in entry.parts if p.kind != CALL]
    calls = [p.raw for p in entry.parts if p.kind == CALL]
    if all(isinstance(c, str) for c in content):
        # Merged messages join their texts the way a reader would see them: one paragraph each.
        if content:
            message["content"] = "\n\n".join(content)
        elif message.get("content") not in (None, ""):
            # Every text was dropped (blank-text-block): the source's must not go out again.
            message["content"] = None if calls else ""
    else:
        message["content"] = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    if calls:
        message["tool_calls"] = calls
    else:
        message.pop("tool_calls", None)
    return message


DIALECT = OpenAIChat()
