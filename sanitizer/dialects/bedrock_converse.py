"""Bedrock Converse: ``messages`` whose content blocks are keyed by kind (``text``, ``toolUse``...).

Converse does not merge turns: a ``toolUse`` is answered by ``toolResult`` blocks in exactly the
next message, roles strictly alternate, and the conversation starts with the user.
"""

from __future__ import annotations

import re
from typing import Any

from .._errors import SanitizeError
from .._ir import CALL, OTHER, RESULT, TEXT, THINKING, Entry, Part, Transcript
from ._base import Dialect
from ._shape import messages_of, require_id, require_object, require_sides, type_name

ROLES = ("user", "assistant")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class BedrockConverse(Dialect):
    api = "bedrock-converse"
    result_role = "user"
    results_share_message = True
    results_span_messages = False
    thinking_pins_calls = True
    tool_id_pattern = TOOL_ID

    def looks_clean(self, body: dict[str, Any]) -> bool:
        messages = body.get("messages")
        if type(messages) is not list or not messages:
            return False
        expected = "user"
        pending: set[Any] = set()
        seen: set[Any] = set()
        for message in messages:
            if type(message) is not dict:
                return False
            content = message.get("content")
            if message.get("role") != expected or type(content) is not list or not content:
                return False
            expected = "assistant" if expected == "user" else "user"
            if pending:
                answered = [
                    b["toolResult"].get("toolUseId")
                    for b in content
                    if type(b) is dict and type(b.get("toolResult")) is dict
                ]
                if len(answered) != len(content) or any(type(a) is not str for a in answered):
                    return False
                if any(
                    b["toolResult"].get("status") == "error" and not b["toolResult"].get("content") for b in content
                ):
                    return False
                if sorted(answered) != sorted(pending):
                    return False
                pending = set()
                continue
            for block in content:
                if type(block) is not dict or "toolResult" in block or len(block) != 1:
                    return False
                if "text" in block and (type(block["text"]) is not str or not block["text"].strip()):
                    return False
                use = block.get("toolUse")
                if use is not None and message["role"] != "assistant":
                    return False
                if use is not None:
                    call_id = use.get("toolUseId") if type(use) is dict else None
                    if type(call_id) is not str or call_id in seen or not TOOL_ID.match(call_id):
                        return False
                    seen.add(call_id)
                    pending.add(call_id)
        return not pending and (not seen or self.has_tool_definitions(body))

    def parse(self, body: dict[str, Any]) -> Transcript:
        entries = []
        for index, raw in enumerate(messages_of(body)):
            path = f"messages[{index}]"
            message = require_object(raw, path)
            role = message.get("role")
            if role not in ROLES:
                raise SanitizeError(f"{path}.role", f"must be 'user' or 'assistant', not {role!r}")
            content = message.get("content")
            if not isinstance(content, list):
                raise SanitizeError(f"{path}.content", f"must be an array of blocks, not {type_name(content)}")
            parts = [_part(block, f"{path}.content[{k}]") for k, block in enumerate(content)]
            require_sides(parts, role, f"{path}.content", caller="assistant", answerer="user")
            entries.append(Entry(role, parts, message, index))
        return Transcript(entries, body)

    def render(self, transcript: Transcript) -> dict[str, Any]:
        return transcript.render(lambda e: {**e.source, "content": [p.raw for p in e.parts]} if e.dirty else e.source)

    def synthetic_result(self, call: Part, text: str) -> Part:
        assert call.call_id is not None
        block = {"toolResult": {"toolUseId": call.call_id, "content": [{"text": text}], "status": "error"}}
        return Part(RESULT, block, call.call_id)

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        return [Entry("user", parts, {"role": "user"}, None, dirty=True)]

    def with_call_id(self, part: Part, call_id: str) -> Part:
        key = "toolUse" if part.kind == CALL else "toolResult"
        return Part(part.kind, {**part.raw, key: {**part.raw[key], "toolUseId": call_id}}, call_id, part.name)

    def payload(self, part: Part) -> Any:
        if part.kind == CALL:
            return part.raw["toolUse"].get("input")
        return part.raw["toolResult"].get("content")

    def has_tool_definitions(self, body: dict[str, Any]) -> bool:
        config = body.get("toolConfig")
        return isinstance(config, dict) and bool(config.get("tools"))

    def stub_tools(self, body: dict[str, Any], names: list[str], description: str) -> dict[str, Any]:
        config = body.get("toolConfig")
        tools = [
            {"toolSpec": {"name": n, "description": description, "inputSchema": {"json": {"type": "object"}}}}
            for n in names
        ]
        return {"toolConfig": {**(config if isinstance(config, dict) else {}), "tools": tools}}

    def text_entry(self, role: str, text: str) -> Entry:
        return Entry(role, [Part(TEXT, {"text": text})], {"role": role}, None, dirty=True)


def _part(item: Any, path: str) -> Part:
    block = require_object(item, path)
    if "toolUse" in block:
        use = require_object(block["toolUse"], f"{path}.toolUse")
        name = use.get("name")
        return Part(
            CALL,
            block,
            require_id(use.get("toolUseId"), f"{path}.toolUse.toolUseId"),
            name if isinstance(name, str) else None,
        )
    if "toolResult" in block:
        result = require_object(block["toolResult"], f"{path}.toolResult")
        return Part(RESULT, block, require_id(result.get("toolUseId"), f"{path}.toolResult.toolUseId"))
    if "text" in block:
        return Part(TEXT, block)
    if "reasoningContent" in block:
        return Part(THINKING, block)
    return Part(OTHER, block)


DIALECT = BedrockConverse()
