"""Real agent frameworks -> Suture -> the strict emulator, all on loopback, nothing on the network.

Each test leaves a framework's transcript in the broken state production leaves it in, then
makes the framework's next call twice: through Suture (it succeeds, and the emulator received
a repaired transcript) and straight to the emulator (it gets the provider's 400).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.framework_stack import Stack
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

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


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    record = tmp_path / "provider.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with (
        running_server(app, timeout_graceful_shutdown=1) as provider,
        suture(openai={"upstream": provider + "/v1"}, anthropic={"upstream": provider}) as proxy,
    ):
        yield Stack(provider=provider, suture=proxy, record=record)
