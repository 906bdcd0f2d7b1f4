"""The strategies for refusals of a kind no earlier strategy had, through a running Suture: the
strict emulator refuses with the provider's own text (an ``ExtraRule``), Suture reads it, applies
the strategy, retries once and logs the repair; the client, an official SDK, gets its answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.emulator.extra_rules import ExtraRule
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_server

KEY = "sk-client-canary-0123456789"
# OpenAI's text (OpenHands/OpenHands#7700).
IMAGE_REFUSED = (
    "Invalid 'messages[{n}]'. Image URLs are only allowed for messages with role 'user', but this message with "
    "role 'tool' contains an image URL."
)
# vLLM's (vllm-project/vllm#43995): Python's error on the history's arguments, as it raised.
ARGUMENTS = '{"filePath": "/tmp/test.txt", "newString": "He said "hello" and left", "oldString": "old content"}'
ARGUMENTS_REFUSED = "Expecting ',' delimiter: line 1 column 54 (char 53)"

EXTRA_RULES = (
    ExtraRule(api="openai-chat", block_type="image_url", role="tool", message=IMAGE_REFUSED),
    # The message's JSON holds the arguments encoded once more: their quotes escaped.
    ExtraRule(api="openai-chat", message_text='He said \\"hello\\" and left', message=ARGUMENTS_REFUSED),
)


class Stack:
    def __init__(self, record: Path, url: str) -> None:
        self.record, self.url = record, url

    def statuses(self) -> list[int]:
        return [r["status"] for r in recorded_requests(self.record)]

    def sent(self, n: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = recorded_requests(self.record)[n]["body"]["messages"]
        return messages

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=KEY, max_retries=0, timeout=10)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, extra_rules=EXTRA_RULES))
    with (
        running_server(app, timeout_graceful_shutdown=1) as emulator,
        suture(openai={"upstream": emulator + "/v1"}) as url,
    ):
        yield Stack(record, url)


SCREENSHOT = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
IMAGE_TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "Take a screenshot of the page."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_shot", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "call_shot", "content": [{"type": "text", "text": "Captured."}, SCREENSHOT]},
    {"role": "user", "content": "What do you see?"},
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_an_image_in_a_named_tool_message_moves_to_a_user_message(running: Stack, logs: LogLines, stream: bool) -> None:
    with running.openai() as client:
        if stream:
            chunks = list(client.chat.completions.create(model="gpt-4o", messages=IMAGE_TURN, stream=True))  # type: ignore[arg-type]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=IMAGE_TURN)  # type: ignore[arg-type]
            assert raw.headers["x-suture-retried"] == "1" and raw.headers["x-suture-repairs"] == "1"
            text = raw.parse().choices[0].message.content or ""
    assert "What do you see?" in text
    assert running.statuses() == [400, 200]
    assert running.sent(0) == IMAGE_TURN
    user, assistant, tool, moved, last = running.sent(1)
    assert (user, assistant, last) == (IMAGE_TURN[0], IMAGE_TURN[1], IMAGE_TURN[3])
    assert tool == {"role": "tool", "tool_call_id": "call_shot", "content": [{"type": "text", "text": "Captured."}]}
    assert moved["role"] == "user" and moved["content"][1:] == [SCREENSHOT]
    [line] = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert (line["code"], line["strategy"], line["message_index"], line["tool_call_id"]) == (
        "RJ010",
        "move-named-tool-image",
        2,
        "call_shot",
    )
    assert line["provider_message"] == IMAGE_REFUSED.format(n=2)


def test_history_arguments_the_provider_cannot_parse_are_reset(running: Stack, logs: LogLines) -> None:
    messages = [
        {"role": "user", "content": "Hello"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "replace_string_in_file", "arguments": ARGUMENTS},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "Edited /tmp/test.txt"},
        {"role": "user", "content": "Continue"},
    ]
    with running.openai() as client:
        raw = client.chat.completions.with_raw_response.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
    assert raw.headers["x-suture-retried"] == "1"
    assert "Continue" in (raw.parse().choices[0].message.content or "")
    assert running.statuses() == [400, 200]
    sent = running.sent(1)
    assert sent[1]["tool_calls"][0]["function"] == {"name": "replace_string_in_file", "arguments": "{}"}
    assert sent[0] == messages[0] and sent[2:] == messages[2:]
    [line] = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert (line["code"], line["strategy"], line["tool_call_id"]) == ("RJ009", "reset-named-arguments", "call_abc")
    assert line["provider_message"] == ARGUMENTS_REFUSED


# Alibaba DashScope's text-only models on a content of text parts: a refusal that names nothing
# (can1357/oh-my-pi#1859). The portable profile, not a strategy, answers it.
VAGUE_REFUSED = (
    "InternalError.Algo.InvalidParameter: The provided messages input is invalid. "
    "The error info is [Unexpected item type in content.]"
)
PORTABLE_RULES = (
    ExtraRule(
        api="openai-chat",
        message_text="CONTEXT-OVERFLOW",
        message="Range of input length should be [1, 129024]: this model's maximum context length is 131072 tokens.",
    ),
    ExtraRule(api="openai-chat", block_type="text", message=VAGUE_REFUSED),
)
PARTS_TURN: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "Read a.py"}, {"type": "text", "text": "then b.py"}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "functions.read:0", "type": "function", "function": {"name": "read", "arguments": ""}}],
    },
    {"role": "tool", "tool_call_id": "functions.read:0", "content": [{"type": "text", "text": "print(1)"}]},
    {"role": "user", "content": "And b.py?"},
]


@pytest.fixture
def strict_about_parts(tmp_path: Path) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, extra_rules=PORTABLE_RULES))
    with (
        running_server(app, timeout_graceful_shutdown=1) as emulator,
        suture(openai={"upstream": emulator + "/v1"}, capture={"dir": str(tmp_path / "captures")}) as url,
    ):
        yield Stack(record, url)


def test_a_refusal_that_names_nothing_gets_the_portable_profile(
    strict_about_parts: Stack, logs: LogLines, tmp_path: Path
) -> None:
    with strict_about_parts.openai() as client:
        raw = client.chat.completions.with_raw_response.create(model="qwen3-max", messages=PARTS_TURN)  # type: ignore[arg-type]
    assert raw.headers["x-suture-retried"] == "1"
    assert "And b.py?" in (raw.parse().choices[0].message.content or "")
    assert strict_about_parts.statuses() == [400, 200]
    user, assistant, tool, last = strict_about_parts.sent(1)
    assert user == {"role": "user", "content": "Read a.py\n\nthen b.py"}
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == "functions_read_0"
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
    assert tool["content"] == "print(1)" and last == PARTS_TURN[3]
    lines = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert {(line["code"], line["strategy"]) for line in lines} == {("RJ011", "portable-profile")}
    assert {line["action"] for line in lines} == {"joined", "replaced", "renamed"}
    assert lines[0]["provider_message"] == VAGUE_REFUSED
    metrics = httpx.get(strict_about_parts.url + "/metrics").text
    assert (
        'suture_rejection_repairs_total{outcome="accepted",strategy="portable-profile",upstream="openai"} 1.0'
        in metrics
    )
    [capture] = wait_for(lambda: list((tmp_path / "captures").glob("*.json")))
    [retry] = json.loads(capture.read_text())["rejection_repairs"]
    assert retry["strategy"] == "portable-profile" and retry["forwarded"]["messages"][0] == user


def test_a_context_length_refusal_is_relayed_not_escalated(strict_about_parts: Stack) -> None:
    # Text parts the portable profile would join: the refusal is about the length, so it is relayed.
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "CONTEXT-OVERFLOW"}, {"type": "text", "text": "x"}]}
    ]
    with strict_about_parts.openai() as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="qwen3-max", messages=messages)  # type: ignore[arg-type]
    assert "maximum context length" in caught.value.message
    assert "x-suture-retried" not in caught.value.response.headers
    assert strict_about_parts.statuses() == [400]
