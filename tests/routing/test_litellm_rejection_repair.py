"""Repair from a refusal on the litellm path: the provider (the strict emulator, behind litellm's
OpenAI-compatible and Anthropic clients) refuses with a rule Suture does not know, naming where;
Suture repairs that and calls litellm once more, streaming or not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from proxy.app import build_app
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.emulator.extra_rules import ExtraRule
from proxy.settings import Settings
from tests._support.litellm_routes import NO_LITELLM
from tests._support.servers import running_server

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

RULES = (
    ExtraRule(
        api="openai-chat",
        same_role_runs=True,
        message="Invalid 'messages[{n}]': messages with role '{role}' must alternate with another role.",
    ),
    ExtraRule(
        api="openai-chat",
        message_text="CONTEXT-OVERFLOW",
        message="This model's maximum context length is 128000 tokens. Please reduce the length of the messages.",
    ),
)


@pytest.fixture(scope="module")
def stack(_litellm_env: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    record = tmp_path_factory.mktemp("emulator") / "requests.jsonl"
    emulator = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, extra_rules=RULES))
    with running_server(emulator, timeout_graceful_shutdown=1) as emu:
        settings = Settings(
            upstreams={"compat": {"protocol": "litellm", "model": "openai/{model}", "api_base": emu + "/v1"}},
            routes=[{"match": "compat-*", "upstream": "compat"}],
        )
        with running_server(build_app(settings), timeout_graceful_shutdown=2) as url:
            yield url, record


def _statuses(record: Path, since: int) -> list[int]:
    lines = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return [e["status"] for e in lines if "event" not in e][since:]


def _seen(record: Path) -> int:
    return len(_statuses(record, 0))


MESSAGES: list[Any] = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_refusal_through_litellm_is_repaired_and_retried(stack: tuple[str, Path], stream: bool) -> None:
    url, record = stack
    before = _seen(record)
    with openai.OpenAI(base_url=url + "/v1", api_key="sk-client", max_retries=0) as client:
        if stream:
            chunks = list(client.chat.completions.create(model="compat-chat", messages=MESSAGES, stream=True))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            raw = client.chat.completions.with_raw_response.create(model="compat-chat", messages=MESSAGES)
            assert raw.headers["x-suture-retried"] == "1"
            assert raw.headers["x-suture-repairs"] == "1"
            text = raw.parse().choices[0].message.content or ""
    assert "Are you there?" in text
    assert _statuses(record, before) == [400, 200]


def test_an_anthropic_client_through_litellm_gets_the_retry_too(stack: tuple[str, Path]) -> None:
    url, record = stack
    before = _seen(record)
    with anthropic.Anthropic(base_url=url, api_key="sk-client", max_retries=0) as client:
        message = client.messages.create(model="compat-chat", max_tokens=64, messages=MESSAGES)
    assert "Are you there?" in message.content[0].text  # type: ignore[union-attr]
    assert _statuses(record, before) == [400, 200]


def test_a_context_length_refusal_through_litellm_is_not_retried(stack: tuple[str, Path]) -> None:
    url, record = stack
    before = _seen(record)
    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-client", max_retries=0)
    with client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="compat-chat", messages=[{"role": "user", "content": "CONTEXT-OVERFLOW"}])
    assert "maximum context length" in caught.value.message
    assert _statuses(record, before) == [400]
