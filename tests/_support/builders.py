"""Tiny constructors for request bodies, so each test case reads as a transcript."""

from __future__ import annotations

import json
from typing import Any

RECOVERY = "I noticed that you have interrupted me. What can I do for you?"
CORRECTION = "No, don't list the files. Just tell me today's date."

Msg = dict[str, Any]


# Anthropic Messages
def tu(ident: str, name: str = "ls", tool_input: object = None) -> Msg:
    return {"type": "tool_use", "id": ident, "name": name, "input": {} if tool_input is None else tool_input}


def tr(ident: str, content: object = "ok", **extra: object) -> Msg:
    return {"type": "tool_result", "tool_use_id": ident, "content": content, **extra}


def text(value: str) -> Msg:
    return {"type": "text", "text": value}


def _content(content: tuple[object, ...]) -> object:
    # A lone string or list is the content itself; blocks are collected into a list.
    if len(content) == 1 and isinstance(content[0], str | list):
        return content[0]
    return list(content)


def au(*content: object) -> Msg:
    return {"role": "user", "content": _content(content)}


def aa(*content: object) -> Msg:
    return {"role": "assistant", "content": _content(content)}


def anthropic(*messages: Msg, tools: bool = True, **extra: object) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 256, "messages": list(messages)}
    if tools:
        body["tools"] = [{"name": "ls", "input_schema": {"type": "object"}}]
    body.update(extra)
    return body


# OpenAI Chat
def call(ident: str, name: str = "ls", arguments: str = "{}") -> Msg:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def ou(content: object = "hi") -> Msg:
    return {"role": "user", "content": content}


def osys(content: object = "Be brief.") -> Msg:
    return {"role": "system", "content": content}


def oa(content: object = "ok", *calls: str, **extra: object) -> Msg:
    msg: Msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [call(c) for c in calls]
    msg.update(extra)
    return msg


def ot(ident: str, content: object = "ok", **extra: object) -> Msg:
    return {"role": "tool", "tool_call_id": ident, "content": content, **extra}


def chat(*messages: Msg, **extra: object) -> dict[str, Any]:
    return {
        "model": "gpt-4o",
        "messages": list(messages),
        "tools": [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}],
        **extra,
    }


# OpenAI Responses
def ri_msg(role: str, content: str) -> Msg:
    return {"type": "message", "role": role, "content": content}


def ri_call(call_id: str, **extra: object) -> Msg:
    return {"type": "function_call", "call_id": call_id, "name": "ls", "arguments": "{}", **extra}


def ri_out(call_id: str, **extra: object) -> Msg:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok", **extra}


def responses(*items: Msg, **extra: object) -> dict[str, Any]:
    return {"model": "gpt-5", "input": list(items), **extra}


# Gemini
def gu(*parts: Msg) -> Msg:
    return {"role": "user", "parts": list(parts)}


def gm(*parts: Msg) -> Msg:
    return {"role": "model", "parts": list(parts)}


def gtext(value: str) -> Msg:
    return {"text": value}


def fc(name: str = "ls") -> Msg:
    return {"functionCall": {"name": name, "args": {}}}


def fr(name: str = "ls") -> Msg:
    return {"functionResponse": {"name": name, "response": {"output": "ok"}}}


def gemini(*contents: Msg) -> dict[str, Any]:
    return {"contents": list(contents), "tools": [{"functionDeclarations": [{"name": "ls"}]}]}


# Bedrock Converse
def btu(ident: str) -> Msg:
    return {"toolUse": {"toolUseId": ident, "name": "ls", "input": {}}}


def btr(ident: str, content: object = None, status: str = "success") -> Msg:
    body = [{"text": "ok"}] if content is None else content
    return {"toolResult": {"toolUseId": ident, "content": body, "status": status}}


def bu(*content: Msg) -> Msg:
    return {"role": "user", "content": list(content)}


def ba(*content: Msg) -> Msg:
    return {"role": "assistant", "content": list(content)}


def bedrock(*messages: Msg, tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": list(messages)}
    if tools:
        body["toolConfig"] = {"tools": [{"toolSpec": {"name": "ls", "inputSchema": {"json": {}}}}]}
    return body


def message_of(body: dict[str, Any] | list[Any]) -> str:
    """The error text inside any provider's envelope (OpenRouter: inside the upstream's raw body)."""
    if isinstance(body, list):
        return str(body[0]["error"]["message"])
    if "error" in body:
        error = body["error"]
        if "metadata" in error:
            return message_of(json.loads(error["metadata"]["raw"]))
        return str(error["message"])
    return str(body["message"])
