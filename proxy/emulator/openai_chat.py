"""OpenAI Chat Completions: ``POST /v1/chat/completions``, JSON and ``data:``-only SSE."""

from __future__ import annotations

from typing import Any

from .dialect import Dialect, Turn
from .script import chunks, last_user_text, new_id
from .sse import frame

_TEXT_PARTS = frozenset({"text"})


def _missing_field(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter"
    if "messages" not in body:
        return "Missing required parameter: 'messages'."
    return None


def _last_user_text(body: dict[str, Any]) -> str | None:
    return last_user_text(body.get("messages"), _TEXT_PARTS)


def _prompt(body: dict[str, Any]) -> list[Any]:
    return [body.get("messages"), body.get("tools")]


def _usage(turn: Turn) -> dict[str, Any]:
    output = turn.reply.output_tokens
    return {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": output,
        "total_tokens": turn.input_tokens + output,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _finish_reason(turn: Turn) -> str:
    return "tool_calls" if turn.reply.tool_name else "stop"


def _render(turn: Turn) -> dict[str, Any]:
    reply = turn.reply
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
    if reply.tool_name:
        message["tool_calls"] = [
            {
                "id": new_id("call_"),
                "type": "function",
                "function": {"name": reply.tool_name, "arguments": reply.arguments},
            }
        ]
    else:
        message["content"] = reply.text
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(turn)}],
        "usage": _usage(turn),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _stream(turn: Turn) -> list[bytes]:
    reply = turn.reply
    completion_id = new_id("chatcmpl-")
    options = turn.body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True

    def chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
        data: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": turn.created,
            "model": turn.model,
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": choices,
        }
        if include_usage:
            # With include_usage every chunk carries "usage": null until the final usage chunk.
            data["usage"] = usage
        return frame(data)

    def delta(content: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return chunk([{"index": 0, "delta": content, "logprobs": None, "finish_reason": finish_reason}])

    frames: list[bytes]
    if reply.tool_name:
        first_call = {
            "index": 0,
            "id": new_id("call_"),
            "type": "function",
            "function": {"name": reply.tool_name, "arguments": ""},
        }
        frames = [
            delta({"role": "assistant", "content": None, "tool_calls": [first_call], "refusal": None}),
            delta({"tool_calls": [{"index": 0, "function": {"arguments": reply.arguments}}]}),
        ]
    else:
        frames = [delta({"role": "assistant", "content": "", "refusal": None})]
        frames += [delta({"content": piece}) for piece in chunks(reply.text)]
    frames.append(delta({}, _finish_reason(turn)))
    if include_usage:
        frames.append(chunk([], _usage(turn)))
    frames.append(frame("[DONE]"))
    return frames


DIALECT = Dialect(
    api="openai-chat",
    provider="openai",
    missing_field=_missing_field,
    last_user_text=_last_user_text,
    prompt=_prompt,
    render=_render,
    stream=_stream,
)
