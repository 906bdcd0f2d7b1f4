"""Anthropic Messages: ``tool_use`` blocks in assistant messages, ``tool_result`` blocks in user messages."""

from __future__ import annotations

import re
from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, SERVER_CALL, SERVER_RESULT, TEXT, THINKING, Entry, Part, Transcript
from .._media import mislabelled
from ._base import CLEAN, Dialect
from ._shape import messages_of, require_id, require_object, require_sides, type_name

ROLES = ("user", "assistant")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
# Server tools' ids (server_tool_use and its result) are Anthropic's own: ``srvtoolu_...``.
SERVER_TOOL_ID = re.compile(r"^srvtoolu_[a-zA-Z0-9_]+\Z")
_SERVER_CALLS = frozenset(("server_tool_use", "mcp_tool_use"))
# The block types of thinking, which rules read on the body itself too.
THINKING_BLOCKS = frozenset(("thinking", "redacted_thinking"))


class AnthropicMessages(Dialect):
    api = "anthropic-messages"
    result_role = "user"
    results_share_message = True
    thinking_pins_calls = True
    tool_id_pattern = TOOL_ID
    empty_final_assistant_ok = True

    def looks_clean(self, body: dict[str, Any]) -> bool:
        return self.suspects(body) == CLEAN

    def suspects(self, body: dict[str, Any]) -> frozenset[str] | None:
        messages = body.get("messages")
        if type(messages) is not list or not messages:
            return None
        found: set[str] = set()
        pending: set[str] = set()
        calls_seen: set[str] = set()
        # Server calls opened in the current assistant turn (consecutive assistant messages).
        turn_servers: set[Any] = set()
        last = len(messages) - 1
        try:
            if _trailing_whitespace(messages[last]) or _blank_system(body.get("system")):
                return None
            thinking = body.get("thinking")
            # Manual extended thinking and adaptive thinking alike.
            thinking_on = type(thinking) is dict and thinking.get("type") in ("enabled", "adaptive")
            if _final_thinking(messages[last], thinking_on):
                return None
            # With thinking on, the API merges consecutive assistant messages into a turn that must
            # start with thinking: such runs are left to the full pass.
            if thinking_on and _assistant_run(messages):
                return None
            for index, message in enumerate(messages):
                role = message["role"]
                content = message["content"]
                if turn_servers and role != "assistant":
                    turn_servers.clear()
                if role == "system":
                    # Whether it may stay where it is turns on the model and the request (AN014's
                    # quick look settles it); one holding more than text is for the full pass.
                    if not _all_text(content):
                        return None
                    found.add("AN014")
                    continue
                if type(content) is str:
                    if not content.strip() or role not in ROLES:
                        return None
                    if pending:
                        found.update(_UNANSWERED_CALL)
                        pending.clear()
                    continue
                if type(content) is not list or (not content and not (index == last and role == "assistant")):
                    return None
                if role == "user":
                    for block in content:
                        kind = block["type"]
                        if kind == "tool_result":
                            # pending holds strings only, so membership also checks the id's type.
                            result_id = block["tool_use_id"]
                            if result_id in pending:
                                pending.discard(result_id)
                            else:
                                found.update(_OUT_OF_PLACE_RESULT)
                                # An id the API refuses is rewritten wherever it stands (invalid-tool-id).
                                if not TOOL_ID.match(result_id):
                                    found.add("AN004")
                            nested = block.get("content")
                            if type(nested) is list and any(mislabelled(part) for part in nested):
                                found.add("AN020")
                            continue
                        if kind not in _PLAIN_USER_BLOCKS:
                            return None
                        if pending:
                            # Text before the results, or results missing from the message.
                            found.update(_BEFORE_RESULTS)
                        if kind == "text" and _blank(block):
                            found.add("AN002")
                        elif kind == "image" and mislabelled(block):
                            found.add("AN020")
                elif role == "assistant":
                    if pending:
                        # An assistant message where the results should be: the API merges the two.
                        found.update(_CALL_NOT_LAST)
                        pending.clear()
                    server_calls: set[Any] = set()
                    # The calls come last, and thinking, if the message holds any, first.
                    called = False
                    for block in content:
                        kind = block["type"]
                        if kind == "tool_use":
                            call_id = block["id"]
                            if call_id in calls_seen:
                                found.update(_REUSED_CALL_ID)
                            if not TOOL_ID.match(call_id):
                                found.add("AN004")
                            if type(block.get("input")) is not dict:
                                found.add("AN012")
                            called = True
                            calls_seen.add(call_id)
                            pending.add(call_id)
                            continue
                        if called:
                            found.add("AN010")
                        if kind == "text":
                            if _blank(block):
                                found.add("AN002")
                        elif kind in THINKING_BLOCKS:
                            # The first block was read first: its type is hashable.
                            if content[0]["type"] not in THINKING_BLOCKS:
                                found.add("AN011")
                            # Thinking without its signature, which no request can carry.
                            if kind == "thinking" and block.get("signature", "") == "":
                                found.add("AN019")
                        elif kind in _SERVER_CALLS:
                            server_id = block.get("id")
                            if type(server_id) is not str:
                                return None
                            if kind == "server_tool_use" and not SERVER_TOOL_ID.match(server_id):
                                return None
                            server_calls.add(server_id)
                            turn_servers.add(server_id)
                        elif kind == "tool_result":
                            return None
                        elif kind.endswith("_tool_result"):
                            answered = block.get("tool_use_id")
                            if type(answered) is not str or answered not in turn_servers:
                                return None
                            if kind != "mcp_tool_result" and not SERVER_TOOL_ID.match(answered):
                                return None
                            server_calls.discard(answered)
                            turn_servers.discard(answered)
                    if server_calls and index != last:
                        return None
                else:
                    return None
        except (TypeError, AttributeError, KeyError):
            # A message or block that is not an object, a field missing, a type or id that is not a
            # string: for parse() to reject or every rule to look at.
            return None
        if pending:
            found.update(_UNANSWERED_CALL)
        tools = body.get("tools")
        if type(tools) is list and len(tools) > 1:
            # A tool defined twice ("tools: Tool names must be unique.").
            names = [t.get("name") for t in tools if type(t) is dict]
            if len(set(map(str, names))) != len(names):
                found.add("AN013")
        if calls_seen and not tools:
            found.add("AN006")
        return frozenset(found) if found else CLEAN

    def parse(self, body: dict[str, Any]) -> Transcript:
        entries = []
        # Field paths are spelled out only for an error (as in OpenAI Chat's parse).
        for index, message in enumerate(messages_of(body)):
            if type(message) is not dict:
                require_object(message, f"messages[{index}]")
            role = message.get("role")
            # A system message inside messages is a transcript matter (Claude Opus 4.8 and later
            # take one; AN014 moves it for the others), not a shape error; any other role is.
            if role not in ROLES and role != "system":
                raise SanitizeError(f"messages[{index}].role", f"must be 'user' or 'assistant', not {role!r}")
            parts, sided = _parts(message.get("content"), index)
            if sided and ((role != "assistant" and sided & _CALLED) or (role != "user" and sided & _ANSWERED)):
                require_sides(parts, role, f"messages[{index}].content", caller="assistant", answerer="user")
            entries.append(Entry(role, parts, message, index))
        return Transcript(entries, body)

    def render(self, transcript: Transcript) -> dict[str, Any]:
        return transcript.render(_render_entry)

    def synthetic_result(self, call: Part, text: str) -> Part:
        assert call.call_id is not None
        block = {"type": "tool_result", "tool_use_id": call.call_id, "content": text, "is_error": True}
        return Part(RESULT, block, call.call_id)

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        return [Entry("user", parts, {"role": "user"}, None, dirty=True)]

    def with_call_id(self, part: Part, call_id: str) -> Part:
        key = "id" if part.kind in (CALL, SERVER_CALL) else "tool_use_id"
        return Part(part.kind, {**part.raw, key: call_id}, call_id, part.name)

    def has_tool_definitions(self, body: dict[str, Any]) -> bool:
        return bool(body.get("tools"))

    def stub_tools(self, body: dict[str, Any], names: list[str], description: str) -> dict[str, Any]:
        tools = [{"name": n, "description": description, "input_schema": {"type": "object"}} for n in names]
        # tool_choice none: the model must not call tools that exist only to keep the history valid.
        return {"tools": tools} if "tool_choice" in body else {"tools": tools, "tool_choice": {"type": "none"}}

    def text_entry(self, role: str, text: str) -> Entry:
        return Entry(role, [Part(TEXT, {"type": "text", "text": text})], {"role": role}, None, dirty=True)

    def payload(self, part: Part) -> Any:
        if not isinstance(part.raw, dict):
            return part.raw
        return part.raw.get("input") if part.kind in (CALL, SERVER_CALL) else part.raw.get("content")


_PLAIN_USER_BLOCKS = frozenset(("text", "image", "document", "search_result", "container_upload"))
# What the quick read suspects (Dialect.suspects), by what it saw, as in OpenAI Chat's. A result
# that answers no call awaiting one: answering nothing, answered twice, or out of place.
_OUT_OF_PLACE_RESULT = ("TP004", "TP005", "AN001", "TP002", "TP003")
# A call whose results are not all in the next message. Those that turn up later, or came
# before it, are out of place where they stand; this one may have none.
_UNANSWERED_CALL = ("TP001",)
_BEFORE_RESULTS = ("AN001", "TP001")
_CALL_NOT_LAST = ("AN010", "TP001")
_REUSED_CALL_ID = ("TP007", "TP006")


def _assistant_run(messages: list[Any]) -> bool:
    """Two assistant messages in a row, which the API merges into one turn."""
    previous = None
    for message in messages:
        role = message.get("role") if type(message) is dict else None
        if role == previous == "assistant":
            return True
        previous = role
    return False


def _trailing_whitespace(message: Any) -> bool:
    """A final assistant message whose text ends in whitespace, which Anthropic rejects."""
    if type(message) is not dict or message.get("role") != "assistant":
        return False
    content = message.get("content")
    if type(content) is list and content and type(content[-1]) is dict and content[-1].get("type") == "text":
        content = content[-1].get("text")
    return type(content) is str and content[-1:].isspace()


def _final_thinking(message: Any, enabled: bool) -> bool:
    """A final assistant message ending in thinking, or holding any while thinking is disabled."""
    if type(message) is not dict or message.get("role") != "assistant":
        return False
    content = message.get("content")
    if type(content) is not list or not content:
        return False
    if enabled:
        return type(content[-1]) is dict and content[-1].get("type") in THINKING_BLOCKS
    return any(type(block) is dict and block.get("type") in THINKING_BLOCKS for block in content)


def _all_text(content: Any) -> bool:
    """A message's content that is text only, each text saying something."""
    if type(content) is str:
        return bool(content.strip())
    return (
        type(content) is list
        and bool(content)
        and all(
            type(block) is dict
            and block.get("type") == "text"
            and type(block.get("text")) is str
            and bool(block["text"].strip())
            for block in content
        )
    )


def _blank_system(system: Any) -> bool:
    """A top-level system prompt holding an empty or whitespace-only text, which Anthropic rejects."""
    if type(system) is str:
        return not system.strip()
    return type(system) is list and any(
        type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str and _blank(block)
        for block in system
    )


def _blank(block: dict[str, Any]) -> bool:
    text = block.get("text")
    return type(text) is not str or not text.strip()


# What _parts says a message holds, for the check that calls and results sit on their sides.
_CALLED, _ANSWERED = 1, 2


def _parts(content: Any, message: int) -> tuple[list[Part], int]:
    """The message's parts, and whether it holds tool calls (_CALLED) or results (_ANSWERED)."""
    if isinstance(content, str):
        return [Part(TEXT, content)], 0
    if not isinstance(content, list):
        what = "is required" if content is None else f"must be a string or an array of blocks, not {type_name(content)}"
        raise SanitizeError(f"messages[{message}].content", what)
    parts = []
    sided = 0
    for index, block in enumerate(content):
        if type(block) is not dict:
            require_object(block, _block_path(message, index))
        kind = block.get("type")
        if not isinstance(kind, str):
            what = "is missing" if kind is None else "must be a string"
            raise SanitizeError(f"{_block_path(message, index)}.type", what)
        if kind == "tool_use":
            name = block.get("name")
            call_id = _block_id(block, "id", message, index)
            parts.append(Part(CALL, block, call_id, name if isinstance(name, str) else None))
            sided |= _CALLED
        elif kind == "tool_result":
            parts.append(Part(RESULT, block, _block_id(block, "tool_use_id", message, index)))
            sided |= _ANSWERED
        elif kind == "text":
            parts.append(Part(TEXT, block))
        elif kind in THINKING_BLOCKS:
            parts.append(Part(THINKING, block))
        elif kind in _SERVER_CALLS:
            parts.append(Part(SERVER_CALL, block, _block_id(block, "id", message, index)))
        elif kind.endswith("_tool_result"):
            answered = block.get("tool_use_id")
            parts.append(Part(SERVER_RESULT, block, answered if isinstance(answered, str) else None))
        else:
            parts.append(Part(OTHER, block))
    return parts, sided


def _block_path(message: int, index: int) -> str:
    return f"messages[{message}].content[{index}]"


def _block_id(block: dict[str, Any], key: str, message: int, index: int) -> str:
    value = block.get(key)
    if type(value) is str:
        return value
    return require_id(value, f"{_block_path(message, index)}.{key}")


def _render_entry(entry: Entry) -> Any:
    if not entry.dirty:
        return entry.source
    parts = entry.parts
    if len(parts) == 1 and isinstance(parts[0].raw, str):
        content: Any = parts[0].raw
    else:
        content = [{"type": "text", "text": p.raw} if isinstance(p.raw, str) else p.raw for p in parts]
    return {**entry.source, "content": content}


DIALECT = AnthropicMessages()
