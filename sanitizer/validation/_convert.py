"""Anthropic's and Gemini's OpenAI-compatible endpoints: convert the body as they do, then check.

The conversion keeps what the rules look at (roles, text, tool calls and results, ``tools``,
``model``) and remembers, for every converted message, the index of the OpenAI message it came
from, so ``Violation.message_index`` points into the body as sent while the message text prints
the converted index, as the endpoint does.

Anthropic: ``system``/``developer`` messages become the ``system`` parameter; a ``tool`` message
becomes a user message holding one ``tool_result`` (consecutive ones merge, A9); assistant
``content`` becomes a text block (dropped when empty next to ``tool_calls``) and each tool call
a ``tool_use`` whose ``input`` is the parsed ``arguments``.

Gemini: ``system``/``developer`` messages become ``systemInstruction``; ``assistant`` becomes a
``model`` content with text and ``functionCall`` parts; a run of ``tool`` messages becomes one
user content of ``functionResponse`` parts. Empty string content, a tool-calling assistant's too,
gets the endpoint's own "empty text parameter" error (G5, OpenAI-compatible wording); null
content next to tool calls passes (refused in 2025, langchain-ai/langchain#30803, and taken
since: odysseus-dev/odysseus#837). A tool call's thought signature
travels in its ``extra_content.google.thought_signature`` and lands on its ``functionCall`` part
(G4, for the body's Gemini 3 ``model``).
"""

from __future__ import annotations

import json
from typing import Any

from ._anthropic import validate_anthropic
from ._envelope import violation
from ._gemini import check_contents
from ._openai_chat import parse
from ._violation import Violation

G5_COMPAT = (
    "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
    "again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
_SYSTEM = ("system", "developer")


def validate_via_anthropic(body: object) -> list[Violation]:
    b, messages = parse(body)
    converted: list[dict[str, Any]] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        if msg.role in _SYSTEM:
            continue
        content = msg.raw.get("content")
        if msg.role == "tool":
            # A tool message without an id gives a tool_result with an empty one (A12).
            result = {"type": "tool_result", "tool_use_id": msg.tool_call_id or "", "content": _text_of(content)}
            converted.append({"role": "user", "content": [result]})
        elif msg.role == "assistant" and msg.calls:
            blocks: list[dict[str, Any]] = []
            text = _text_of(content)
            if text:
                blocks.append({"type": "text", "text": text})
            for call in msg.raw["tool_calls"]:
                fn = call["function"]
                blocks.append({"type": "tool_use", "id": call["id"], "name": fn["name"], "input": _args(fn)})
            converted.append({"role": "assistant", "content": blocks})
        else:
            role = "assistant" if msg.role == "assistant" else "user"
            converted.append({"role": role, "content": _anthropic_content(content)})
        index_map.append(i)
    tools = b.get("tools")
    anthropic_body: dict[str, Any] = {"messages": converted, "model": b.get("model")}
    if isinstance(tools, list):
        anthropic_body["tools"] = [
            {"name": t["function"].get("name") if isinstance(t.get("function"), dict) else None}
            for t in tools
            if isinstance(t, dict)
        ]
    return validate_anthropic(anthropic_body, "anthropic-openai-compat", index_map)


def validate_via_gemini(body: object, model: str | None = None) -> list[Violation]:
    p = "gemini-openai-compat"
    b, messages = parse(body)
    out: list[Violation] = []
    contents: list[dict[str, Any]] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        content = msg.raw.get("content")
        if content == "":
            # Next to tool calls too: the endpoint makes a text part of it all the same
            # (FoundationAgents/OpenManus#913; odysseus-dev/odysseus#837, 2026), where null passes.
            out.append(violation(p, "gemini.G5", G5_COMPAT, i))
        if msg.role in _SYSTEM:
            continue
        if msg.role == "tool":
            part: dict[str, Any] = {"functionResponse": {"name": msg.raw.get("name") or "", "response": {}}}
            if contents and index_map and messages[index_map[-1]].role == "tool":
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
                index_map.append(i)
            continue
        parts: list[dict[str, Any]] = []
        if isinstance(content, list):
            for item in content:
                if item.get("type") == "text":
                    if item.get("text"):
                        parts.append({"text": item["text"]})
                else:
                    parts.append({"inlineData": {}})
        elif isinstance(content, str) and content:
            parts.append({"text": content})
        if msg.role == "assistant":
            parts.extend(_function_call(call) for call in msg.raw.get("tool_calls") or ())
        contents.append({"role": "model" if msg.role == "assistant" else "user", "parts": parts})
        index_map.append(i)
    model = model if model is not None else b.get("model")
    if out:
        # An empty text parameter is refused before the turn structure is looked at.
        return out + [v for v in check_contents(contents, p, index_map, model) if v.rule != "gemini.G5"]
    return check_contents(contents, p, index_map, model)


def _function_call(call: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": call["function"]["name"]}}
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    if isinstance(google, dict) and "thought_signature" in google:
        part["thoughtSignature"] = google["thought_signature"]
    return part


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _anthropic_content(content: object) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks: list[dict[str, Any]] = []
        for part in content:
            if part.get("type") == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            else:
                blocks.append({"type": "image"})
        return blocks
    return []


def _args(fn: dict[str, Any]) -> object:
    arguments = fn.get("arguments")
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
