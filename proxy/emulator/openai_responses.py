"""OpenAI Responses: ``POST /v1/responses``, JSON and typed SSE events with ``sequence_number``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sanitizer.dialects.openai_responses import reasoning_model

from .dialect import Dialect, Turn
from .script import chunks, new_id, text_of
from .sse import frame

_TEXT_PARTS = frozenset({"input_text", "text", "output_text"})


def _missing_field(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str):
        return "Missing required parameter: 'model'."
    return None


def _last_user_text(body: dict[str, Any]) -> str | None:
    items = body.get("input")
    if isinstance(items, str):
        return items
    if not isinstance(items, list) or not items or not isinstance(items[-1], dict):
        return None
    last = items[-1]
    if last.get("type", "message") != "message" or last.get("role") != "user":
        return None
    return text_of(last.get("content"), _TEXT_PARTS)


def _prompt(body: dict[str, Any]) -> list[Any]:
    return [body.get("instructions"), body.get("input"), body.get("tools")]


@dataclass
class _Output:
    """One reply's response and output item, with ids minted once so every event agrees."""

    turn: Turn
    response_id: str = field(default_factory=lambda: new_id("resp_", 32))
    call_id: str = field(default_factory=lambda: new_id("call_"))
    item_id: str = field(init=False)
    reasoning_id: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.item_id = new_id("fc_" if self.turn.reply.tool_name else "msg_", 32)
        # A reasoning model puts a reasoning item before what it produces, and OpenAI wants it
        # replayed with the call's fc_ id: without it, the emulator's own output would come back
        # as a broken transcript.
        self.reasoning_id = new_id("rs_", 32) if reasoning_model(self.turn.model) else None

    @property
    def index(self) -> int:
        """The output index of the message or call (after the reasoning item, if any)."""
        return 0 if self.reasoning_id is None else 1

    def reasoning(self) -> list[dict[str, Any]]:
        if self.reasoning_id is None:
            return []
        item: dict[str, Any] = {"id": self.reasoning_id, "type": "reasoning", "summary": []}
        include = self.turn.body.get("include")
        if isinstance(include, list) and "reasoning.encrypted_content" in include:
            # What a stateless client (store: false, Codex) replays the item with: without it
            # OpenAI answers 404 for the id, and the emulator must not break its own output.
            item["encrypted_content"] = "gAAAAA" + new_id("", 64)
        return [item]

    def done_items(self) -> list[dict[str, Any]]:
        return [*self.reasoning(), self.done_item()]

    def item(self, status: str, *, text: str = "", arguments: str = "") -> dict[str, Any]:
        reply = self.turn.reply
        if reply.tool_name:
            return {
                "id": self.item_id,
                "type": "function_call",
                "status": status,
                "arguments": arguments,
                "call_id": self.call_id,
                "name": reply.tool_name,
            }
        content = [_text_part(text)] if status == "completed" else []
        return {"id": self.item_id, "type": "message", "status": status, "role": "assistant", "content": content}

    def done_item(self) -> dict[str, Any]:
        return self.item("completed", text=self.turn.reply.text, arguments=self.turn.reply.arguments)

    def response(self, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        body = self.turn.body
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.turn.created,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": self.turn.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "service_tier": "default",
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text", {"format": {"type": "text"}}),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": _usage(self.turn) if status == "completed" else None,
            "user": None,
            "metadata": body.get("metadata", {}),
        }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _usage(turn: Turn) -> dict[str, Any]:
    output = turn.reply.output_tokens
    return {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + output,
    }


def _render(turn: Turn) -> dict[str, Any]:
    out = _Output(turn)
    return out.response("completed", out.done_items())


def _stream(turn: Turn) -> list[bytes]:
    return [frame(event, event["type"]) for event in events(turn)]


def events(turn: Turn) -> list[dict[str, Any]]:
    """The reply's stream events, numbered: SSE frames' data on ``POST``, text messages on the WebSocket."""
    out = _Output(turn)
    reply = turn.reply
    stream: list[dict[str, Any]] = [
        {"type": "response.created", "response": out.response("in_progress", [])},
        {"type": "response.in_progress", "response": out.response("in_progress", [])},
    ]
    for reasoning in out.reasoning():
        stream += [
            {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
            {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        ]
    stream.append({"type": "response.output_item.added", "output_index": out.index, "item": out.item("in_progress")})
    where = {"item_id": out.item_id, "output_index": out.index}
    if reply.tool_name:
        stream += [
            {"type": "response.function_call_arguments.delta", **where, "delta": reply.arguments},
            {"type": "response.function_call_arguments.done", **where, "arguments": reply.arguments},
        ]
    else:
        part = {**where, "content_index": 0}
        stream.append({"type": "response.content_part.added", **part, "part": _text_part("")})
        stream += [
            {"type": "response.output_text.delta", **part, "delta": piece, "logprobs": []}
            for piece in chunks(reply.text)
        ]
        stream += [
            {"type": "response.output_text.done", **part, "text": reply.text, "logprobs": []},
            {"type": "response.content_part.done", **part, "part": _text_part(reply.text)},
        ]
    stream += [
        {"type": "response.output_item.done", "output_index": out.index, "item": out.done_item()},
        {"type": "response.completed", "response": out.response("completed", out.done_items())},
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(stream)]


def warmup_events(turn: Turn) -> list[dict[str, Any]]:
    """The answer to a ``response.create`` with ``generate: false`` (Codex's warm-up on a new
    WebSocket): a response created and completed with no output."""
    out = _Output(turn)
    stream = [
        {"type": "response.created", "response": out.response("in_progress", [])},
        {"type": "response.completed", "response": {**out.response("completed", []), "usage": None}},
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(stream)]


DIALECT = Dialect(
    api="openai-responses",
    provider="openai",
    missing_field=_missing_field,
    last_user_text=_last_user_text,
    prompt=_prompt,
    render=_render,
    stream=_stream,
)
