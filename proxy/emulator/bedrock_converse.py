"""Bedrock Converse: ``POST /model/{modelId}/converse`` (JSON) and ``/converse-stream``
(AWS event-stream binary frames, ``application/vnd.amazon.eventstream``)."""

from __future__ import annotations

import json
from typing import Any

from .dialect import Dialect, Turn
from .eventstream import event
from .script import chunks, new_id

STREAM_MEDIA_TYPE = "application/vnd.amazon.eventstream"
# AWS's answer to an unsigned request (HTTP 403), verbatim.
MISSING_SIGNATURE = "Missing Authentication Token"
# Not captured from the live API; the shape is right, the wording the emulator's.
BAD_JSON = "The request body is not valid JSON."


def _missing_field(body: dict[str, Any]) -> str | None:
    # The model id comes from the path; a missing `messages` is the validator's shape error.
    return None


def _last_user_text(body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if last.get("role") != "user" or not isinstance(last.get("content"), list):
        return None
    texts = [b["text"] for b in last["content"] if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts) if texts else None


def _prompt(body: dict[str, Any]) -> list[Any]:
    messages = body.get("messages")
    content = [m.get("content") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return [body.get("system"), content, body.get("toolConfig")]


def _stop_reason(turn: Turn) -> str:
    return "tool_use" if turn.reply.tool_name else "end_turn"


def _usage(turn: Turn) -> dict[str, Any]:
    output = turn.reply.output_tokens
    return {"inputTokens": turn.input_tokens, "outputTokens": output, "totalTokens": turn.input_tokens + output}


def _render(turn: Turn) -> dict[str, Any]:
    reply = turn.reply
    # Text, then the tool call when one was scripted (as Claude on Bedrock often answers).
    content: list[dict[str, Any]] = [{"text": reply.text}]
    if reply.tool_name:
        tool_use = {"toolUseId": new_id("tooluse_", 22), "name": reply.tool_name, "input": json.loads(reply.arguments)}
        content.append({"toolUse": tool_use})
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop_reason(turn),
        "usage": _usage(turn),
        "metrics": {"latencyMs": 1},
    }


def _stream(turn: Turn) -> list[bytes]:
    reply = turn.reply
    frames = [event("messageStart", {"role": "assistant"})]
    frames += [event("contentBlockDelta", {"delta": {"text": p}, "contentBlockIndex": 0}) for p in chunks(reply.text)]
    frames.append(event("contentBlockStop", {"contentBlockIndex": 0}))
    if reply.tool_name:
        start = {"toolUse": {"toolUseId": new_id("tooluse_", 22), "name": reply.tool_name}}
        # The input arrives as JSON text in pieces; split it so clients must concatenate.
        middle = len(reply.arguments) // 2
        frames += [
            event("contentBlockStart", {"start": start, "contentBlockIndex": 1}),
            *(
                event("contentBlockDelta", {"delta": {"toolUse": {"input": piece}}, "contentBlockIndex": 1})
                for piece in (reply.arguments[:middle], reply.arguments[middle:])
            ),
            event("contentBlockStop", {"contentBlockIndex": 1}),
        ]
    frames += [
        event("messageStop", {"stopReason": _stop_reason(turn)}),
        event("metadata", {"usage": _usage(turn), "metrics": {"latencyMs": 1}}),
    ]
    return frames


DIALECT = Dialect(
    api="bedrock-converse",
    provider="bedrock",
    missing_field=_missing_field,
    last_user_text=_last_user_text,
    prompt=_prompt,
    render=_render,
    stream=_stream,
)
