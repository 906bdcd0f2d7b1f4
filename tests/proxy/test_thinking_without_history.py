"""AN022 through the running server: the official anthropic SDK -> a real Suture (uvicorn on
loopback) -> the emulator ``suture emulate`` serves.

A tool loop whose assistant turn was written with thinking off, continued with thinking on: the
emulator answers Anthropic's exact 400 when the body goes straight to it, and 200 through Suture,
which forwards the same messages without ``thinking`` and records the repair (the response's
``x-suture-repairs``, the capture's ``repairs``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import orjson
import pytest

from proxy.capture import CaptureStore
from proxy.emulator import EmulatorConfig, build_emulator_app
from sanitizer.validation._anthropic import A13
from tests._support.proxy_e2e import suture, wait_for
from tests._support.servers import running_server

pytestmark = pytest.mark.slow

KEY = "sk-ant-canary-0123456789"
TOOLS = [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}]


def tool_loop(model: str, thinking: dict[str, Any], first: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A request continuing a tool loop whose assistant turn holds no thinking block."""
    call = {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}}
    return {
        "model": model,
        "max_tokens": 4096,
        "thinking": thinking,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [*(first or []), call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "Sunny"}]},
        ],
    }


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str
    leaving: str
    captures: Path

    def client(self, base_url: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0, timeout=10)

    def rejected(self, body: dict[str, Any], base_url: str | None = None) -> str:
        with self.client(base_url or self.emulator) as client, pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(**body)
        assert info.value.status_code == 400
        message: str = info.value.body["error"]["message"]  # type: ignore[index]
        return message

    def last_forwarded(self) -> dict[str, Any]:
        lines = [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]
        got = [e for e in lines if "event" not in e][-1]
        assert got["status"] == 200, got
        body: dict[str, Any] = got["body"]
        return body

    def capture_of(self, request_id: str) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for path in CaptureStore(self.captures).files():
                record: dict[str, Any] = orjson.loads(path.read_bytes())
                if record["request_id"] == request_id:
                    return record
            return None

        record: dict[str, Any] = wait_for(found)
        return record


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("thinking-without-history")
    record, captures = folder / "emulator.jsonl", folder / "captures"
    app = build_emulator_app(EmulatorConfig(provider="anthropic", record_path=record))
    with contextlib.ExitStack() as stack:
        emulator = stack.enter_context(running_server(app, timeout_graceful_shutdown=1))
        # No retry after a refusal: the repair is made before the request is sent.
        anthropic_route = {"upstream": emulator, "rejection_repair": {"enabled": False}}
        url = stack.enter_context(suture(anthropic=anthropic_route, capture={"dir": captures}))
        leaving = stack.enter_context(suture(anthropic=anthropic_route, policy={"thinking_without_history": "leave"}))
        yield Stack(emulator, record, url, leaving, captures)


@pytest.mark.parametrize(
    ("model", "thinking", "first", "found"),
    [
        ("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048}, None, "tool_use"),
        # This turn was written by another model, text first.
        (
            "claude-haiku-4-5",
            {"type": "enabled", "budget_tokens": 1024},
            [{"type": "text", "text": "Let me check."}],
            "text",
        ),
    ],
    ids=["tool-use-first", "text-first"],
)
def test_refused_straight_and_answered_through_suture_without_thinking(
    stack: Stack, model: str, thinking: dict[str, Any], first: list[dict[str, Any]] | None, found: str
) -> None:
    body = tool_loop(model, thinking, first)
    assert stack.rejected(body) == A13.format(n=1, found=found)
    assert stack.rejected(body).startswith(
        f"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
        "`thinking` is enabled, a final `assistant` message must start with a thinking block"
    )

    with stack.client(stack.suture) as client:
        raw = client.messages.with_raw_response.create(**body)
    assert raw.status_code == 200
    assert raw.parse().content
    assert raw.headers["x-suture-repairs"] == "1"

    forwarded = stack.last_forwarded()
    assert "thinking" not in forwarded
    assert forwarded["messages"] == body["messages"]

    record = stack.capture_of(raw.headers["x-suture-request-id"])
    assert record["original"] == body
    [repair] = record["repairs"]
    assert (repair["code"], repair["rule"], repair["action"], repair["message_index"]) == (
        "AN022",
        "thinking-without-history",
        "disabled",
        None,
    )
    assert repair["detail"].startswith("disabled thinking for this request only, the transcript forwarded as it is")
    assert f"removed thinking {json.dumps(thinking, separators=(',', ':'), sort_keys=True)}" in repair["detail"]


def test_streamed_too(stack: Stack) -> None:
    body = tool_loop("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048})
    with stack.client(stack.suture) as client, client.messages.stream(**body) as events:
        assert events.get_final_text()
        assert events.response.headers["x-suture-repairs"] == "1"
    assert "thinking" not in stack.last_forwarded()


def test_a_turn_that_kept_its_thinking_keeps_thinking_on(stack: Stack) -> None:
    signed = {"type": "thinking", "thinking": "Call the weather tool.", "signature": "EqQBCkgIARABGAIiQL4s"}
    body = tool_loop("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048}, [signed])
    with stack.client(stack.suture) as client:
        raw = client.messages.with_raw_response.create(**body)
    assert raw.status_code == 200
    assert raw.headers["x-suture-repairs"] == "0"
    assert stack.last_forwarded()["thinking"] == body["thinking"]


def test_policy_leave_forwards_it_to_the_providers_refusal(stack: Stack) -> None:
    body = tool_loop("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048})
    assert stack.rejected(body, stack.leaving) == A13.format(n=1, found="tool_use")
