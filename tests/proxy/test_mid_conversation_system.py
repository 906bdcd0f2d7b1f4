"""Claude Code's mid-conversation system messages end to end (issue 38): the official SDK, Suture,
the strict emulator.

Claude Code sends ``{"role": "system"}`` inside ``messages`` (an "Available agent types..." text at
messages[1]) with ``anthropic-beta: ...,mid-conversation-system-2026-04-07,...``. Claude Opus 4.8
takes it: the request must reach the provider byte for byte (its cached prefix with it), and strict
mode must not refuse it. A model before Opus 4.8 refuses it: Suture moves each system text into the
user turn it follows.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

KEY = "sk-ant-canary-0123456789"
BETAS = "claude-code-20250219,interleaved-thinking-2025-05-14,mid-conversation-system-2026-04-07"
AGENTS = "Available agent types for the Task tool:\n- general-purpose: research and multi-step tasks"
NOTE = "The user sent the following message while you were working: also update the changelog."
TOOLS = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]


def claude_code(model: str) -> dict[str, Any]:
    """The shape Claude Code sends: system text blocks (cache_control on the last), tools, a system
    message after the first user message and another after the tool results."""
    return {
        "model": model,
        "max_tokens": 64,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.160"},
            {"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}},
        ],
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Run the tests."}]},
            {"role": "system", "content": [{"type": "text", "text": AGENTS}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Running them."},
                    {"type": "tool_use", "id": "toolu_01A", "name": "Bash", "input": {"command": "pytest -q"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "3 passed"}]},
            {"role": "system", "content": [{"type": "text", "text": NOTE, "cache_control": {"type": "ephemeral"}}]},
        ],
    }


@dataclass
class Stack:
    emulator: str
    record: Path
    repair: str
    strict: str
    sent: list[bytes]

    def client(self, base_url: str) -> anthropic.Anthropic:
        # The bytes the SDK puts on the wire, to hold what reached the emulator to them.
        hooks = {"request": [lambda request: self.sent.append(request.read())]}
        return anthropic.Anthropic(
            base_url=base_url,
            api_key=KEY,
            max_retries=0,
            timeout=10,
            http_client=anthropic.DefaultHttpxClient(event_hooks=hooks),
        )

    def last_received(self) -> dict[str, Any]:
        lines = [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]
        received: dict[str, Any] = [e for e in lines if "event" not in e][-1]
        return received


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    record = tmp_path_factory.mktemp("mid-conversation-system") / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="anthropic", record_path=record))
    with contextlib.ExitStack() as stack:
        emulator = stack.enter_context(running_server(app, timeout_graceful_shutdown=1))
        section = {"upstream": emulator, "rejection_repair": {"enabled": False}}
        repair = stack.enter_context(suture(anthropic=section))
        strict = stack.enter_context(suture(anthropic={**section, "mode": "strict"}))
        yield Stack(emulator, record, repair, strict, [])


def test_claude_code_on_opus_4_8_reaches_the_provider_byte_for_byte(stack: Stack) -> None:
    body = claude_code("claude-opus-4-8")
    with stack.client(stack.repair) as client:
        raw = client.messages.with_raw_response.create(**body, extra_headers={"anthropic-beta": BETAS})
    assert raw.status_code == 200
    assert raw.headers["x-suture-repairs"] == "0"
    received = stack.last_received()
    assert received["status"] == 200
    assert received["raw_sha256"] == hashlib.sha256(stack.sent[-1]).hexdigest()
    assert received["headers"]["anthropic-beta"] == BETAS


def test_strict_mode_does_not_refuse_what_opus_4_8_takes(stack: Stack) -> None:
    with stack.client(stack.strict) as client:
        raw = client.messages.with_raw_response.create(
            **claude_code("claude-opus-4-8"), extra_headers={"anthropic-beta": BETAS}
        )
    assert raw.status_code == 200
    assert raw.headers["x-suture-repairs"] == "0"
    assert stack.last_received()["raw_sha256"] == hashlib.sha256(stack.sent[-1]).hexdigest()


def test_on_sonnet_4_5_each_system_text_joins_the_user_turn_it_follows(stack: Stack) -> None:
    body = claude_code("claude-sonnet-4-5")
    with stack.client(stack.emulator) as direct, pytest.raises(anthropic.BadRequestError) as refused:
        direct.messages.create(**body)
    assert refused.value.body["error"]["message"] == "role 'system' is not supported on this model"  # type: ignore[index]

    with stack.client(stack.repair) as client:
        raw = client.messages.with_raw_response.create(**body)
    assert raw.status_code == 200
    assert raw.headers["x-suture-repairs"] == "2"
    forwarded = stack.last_received()["body"]
    # The top-level system, and every message before the first system message, as sent: the
    # cached prefix survives. Each system text is a <system-reminder> at the end of its user turn.
    assert forwarded["system"] == body["system"]
    assert [m["role"] for m in forwarded["messages"]] == ["user", "assistant", "user"]
    first, _, results = forwarded["messages"]
    assert first["content"] == [
        {"type": "text", "text": "Run the tests."},
        {"type": "text", "text": f"<system-reminder>\n{AGENTS}\n</system-reminder>"},
    ]
    assert results["content"][0]["type"] == "tool_result"
    assert results["content"][1] == {
        "type": "text",
        "text": f"<system-reminder>\n{NOTE}\n</system-reminder>",
        "cache_control": {"type": "ephemeral"},
    }


def test_strict_mode_refuses_it_on_sonnet_4_5_beta_or_not(stack: Stack) -> None:
    # The model decides, not the beta: Anthropic refused Claude Code's system message on Opus 4.7,
    # betas and all (anthropics/claude-code#61242).
    for headers in ({}, {"anthropic-beta": BETAS}):
        with stack.client(stack.strict) as client, pytest.raises(anthropic.BadRequestError) as refused:
            client.messages.create(**claude_code("claude-sonnet-4-5"), extra_headers=headers)
        message = refused.value.body["error"]["message"]  # type: ignore[index]
        assert message.startswith("Suture's strict mode refused this request")
        assert "AN014 system-role-message (message 1)" in message


def test_strict_mode_reads_the_betas_of_every_anthropic_beta_header(stack: Stack) -> None:
    """A body that names no model: what the request declares stands for it. The header may come
    once, comma-separated, or several times; strict mode reads them all."""
    body = claude_code("claude-opus-4-8")
    del body["model"]
    url = stack.strict + "/v1/messages"
    base = [("x-api-key", KEY), ("anthropic-version", "2023-06-01"), ("content-type", "application/json")]
    refused = httpx.post(url, content=json.dumps(body), headers=base, timeout=10)
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("Suture's strict mode refused this request")

    repeated = [
        *base,
        ("anthropic-beta", "claude-code-20250219"),
        ("anthropic-beta", "mid-conversation-system-2026-04-07"),
    ]
    forwarded = httpx.post(url, content=json.dumps(body), headers=repeated, timeout=10)
    # Past strict mode, the provider's own answer: Anthropic requires a model.
    assert forwarded.status_code == 400
    assert forwarded.json()["error"]["message"] == "model: Field required"
