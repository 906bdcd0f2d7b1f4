"""Gemini: ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``.

The model is named in the URL, not the body. ``streamGenerateContent?alt=sse`` streams
``GenerateContentResponse`` chunks as SSE (what Google's SDKs ask for); without ``alt=sse`` the
same chunks come back as one JSON array.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .dialect import Dialect, Turn
from .script import chunks, new_id

# Google's answer to a request without a key, verbatim (HTTP 403, PERMISSION_DENIED).
MISSING_KEY = (
    "Method doesn't allow unregistered callers (callers without established identity). "
    "Please use API Key or other form of API consumer identity to call this API."
)
# Not captured from the live API; the shape is right, the wording the emulator's.
BAD_JSON = "Invalid JSON payload received. The request body is not valid JSON."


def _missing_field(body: dict[str, Any]) -> str | None:
    # The model comes from the path; a missing `contents` is the validator's G6.
    return None


def _last_user_text(body: dict[str, Any]) -> str | None:
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents or not isinstance(contents[-1], dict):
        return None
    last = contents[-1]
    if last.get("role", "user") != "user" or not isinstance(last.get("parts"), list):
        return None
    texts = [p["text"] for p in last["parts"] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts) if texts else None


def _prompt(body: dict[str, Any]) -> list[Any]:
    contents = body.get("contents")
    parts = [c.get("parts") for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []
    return [body.get("systemInstruction"), parts, body.get("tools")]


def _usage(turn: Turn) -> dict[str, Any]:
    output = turn.reply.output_tokens
    return {
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": output,
        "totalTokenCount": turn.input_tokens + output,
    }


def _response(turn: Turn, parts: list[dict[str, Any]], response_id: str, *, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if last:
        candidate["finishReason"] = "STOP"
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": turn.model, "responseId": response_id}
    if last:
        out["usageMetadata"] = _usage(turn)
    return out


def stream_chunks(turn: Turn) -> list[dict[str, Any]]:
    """The streamed ``GenerateContentResponse`` chunks; the last carries finishReason and usage."""
    response_id = new_id("", 22)
    reply = turn.reply
    if reply.tool_name:
        call = {"functionCall": {"name": reply.tool_name, "args": json.loads(reply.arguments)}}
        return [_response(turn, [call], response_id, last=True)]
    pieces = chunks(reply.text)
    return [_response(turn, [{"text": p}], response_id, last=i == len(pieces) - 1) for i, p in enumerate(pieces)]


def _render(turn: Turn) -> dict[str, Any]:
    reply = turn.reply
    if reply.tool_name:
        part: dict[str, Any] = {"functionCall": {"name": reply.tool_name, "args": json.loads(reply.arguments)}}
    else:
        part = {"text": reply.text}
    return _response(turn, [part], new_id("", 22), last=True)


def _stream(turn: Turn) -> list[bytes]:
    # Google ends each SSE event with CRLF CRLF.
    return [
        b"data: " + json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode() + b"\r\n\r\n"
        for c in stream_chunks(turn)
    ]


DIALECT = Dialect(
    api="gemini",
    provider="gemini",
    missing_field=_missing_field,
    last_user_text=_last_user_text,
    prompt=_prompt,
    render=_render,
    stream=_stream,
)
# Vertex AI: the same body and answers, its own auth and some of its own 400 texts.
VERTEX = dataclasses.replace(DIALECT, provider="vertex", checks="vertex")
