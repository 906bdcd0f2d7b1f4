"""Anthropic Messages: ``POST /v1/messages``, JSON and named SSE events."""

from __future__ import annotations

from typing import Any

from .dialect import Dialect, Turn
from .script import chunks, last_user_text, new_id
from .sse import frame

_TEXT_PARTS = frozenset({"text"})


def _missing_field(body: dict[str, Any]) -> str | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    if not isinstance(body["model"], str):
        return "model: Input should be a valid string"
    return None


def _last_user_text(body: dict[str, Any]) -> str | None:
    return last_user_text(body.get("messages"), _TEXT_PARTS)


def _prompt(body: dict[str, Any]) -> list[Any]:
    return [body.get("system"), body.get("messages"), body.get("tools")]


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    """The content blocks: text, then the tool call if one was scripted (as Claude often does)."""
    reply = turn.reply
    blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
    if reply.tool_name:
        blocks.append({"type": "tool_use", "id": new_id("toolu_"), "name": reply.tool_name, "input": reply.input})
    return blocks


def _stop_reason(turn: Turn) -> str:
    return "tool_use" if turn.reply.tool_name else "end_turn"


def _message(turn: Turn, content: list[dict[str, Any]], stop_reason: str | None, output_tokens: int) -> dict[str, Any]:
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": turn.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        },
    }


def _render(turn: Turn) -> dict[str, Any]:
    return _message(turn, _blocks(turn), _stop_reason(turn), turn.reply.output_tokens)


def _stream(turn: Turn) -> list[bytes]:
    events: list[dict[str, Any]] = [{"type": "message_start", "message": _message(turn, [], None, 1)}]
    for index, block in enumerate(_blocks(turn)):
        if block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            if index == 0:
                events.append({"type": "ping"})
            deltas = [{"type": "text_delta", "text": piece} for piece in chunks(block["text"])]
        else:
            # The input arrives as JSON text in pieces after an empty one; split so clients must concatenate.
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            arguments = turn.reply.arguments
            middle = len(arguments) // 2
            deltas = [
                {"type": "input_json_delta", "partial_json": arguments[:middle]},
                {"type": "input_json_delta", "partial_json": arguments[middle:]},
            ]
        events += [{"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(turn), "stop_sequence": None},
            "usage": {"output_tokens": turn.reply.output_tokens},
        },
        {"type": "message_stop"},
    ]
    return [frame(event, event["type"]) for event in events]


DIALECT = Dialect(
    api="anthropic-messages",
    provider="anthropic",
    missing_field=_missing_field,
    last_user_text=_last_user_text,
    prompt=_prompt,
    render=_render,
    stream=_stream,
)
