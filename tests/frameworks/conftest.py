"""Real agent frameworks -> Suture -> the strict emulator, all on loopback, nothing on the network.

Each test leaves a framework's transcript in the broken state production leaves it in, then
makes the framework's next call twice: through Suture (it succeeds, and the emulator received
a repaired transcript) and straight to the emulator (it gets the provider's 400).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests.proxy.helpers import suture
from tests.servers import running_server

# Fake keys only: the emulator checks a key is present, Suture passes it through.
FAKE_ENV = {
    "OPENAI_API_KEY": "sk-test",
    "ANTHROPIC_API_KEY": "sk-ant-test",
    # No tracing or telemetry exporter may try to reach the network.
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "OTEL_SDK_DISABLED": "true",
    "LOGFIRE_IGNORE_NO_CONFIG": "1",
}
UNSET_ENV = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    for name in UNSET_ENV:
        monkeypatch.delenv(name, raising=False)


@dataclass
class Stack:
    """The emulator (the provider) and a Suture in front of it."""

    provider: str  # the emulator's URL: what an agent calls without Suture
    suture: str
    record: Path

    def requests(self) -> list[dict[str, Any]]:
        """What the provider received, in order (the emulator's JSON-lines record)."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def last_body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.requests()[-1]["body"]
        return body

    def answered(self, call_id: str) -> bool:
        """Whether the last request the provider received answers ``call_id`` with a result
        (Chat ``tool`` message, Anthropic ``tool_result``, Responses ``function_call_output``)."""
        body = self.last_body()
        items = body.get("messages") or body.get("input") or []
        for item in items:
            if item.get("role") == "tool" and item.get("tool_call_id") == call_id:
                return True
            if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                return True
            content = item.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == call_id
                for b in content
            ):
                return True
        return False


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    record = tmp_path / "provider.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with (
        running_server(app, timeout_graceful_shutdown=1) as provider,
        suture(openai={"upstream": provider + "/v1"}, anthropic={"upstream": provider}) as proxy,
    ):
        yield Stack(provider=provider, suture=proxy, record=record)
