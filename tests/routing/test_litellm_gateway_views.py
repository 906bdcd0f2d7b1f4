"""Transcripts that only break once litellm has converted them, sent through the running Suture
with the official SDKs. The provider's endpoint is a loopback fake that applies that provider's
own validator to what litellm really sent, so a 200 means the conversion of Suture's repair is
one the provider accepts; each test also shows the validator reports the original body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest

from sanitizer import validate
from tests._support.litellm_routes import NO_LITELLM, Provider
from tests._support.litellm_seeds import TOOLS_CHAT, TOOLS_MESSAGES

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

REMINDER = "<system-reminder>\nThe user opened README.md.\n</system-reminder>"
FILE = "line 1 of README.md"


def _accepted(provider: Provider, api: str, rules: str) -> dict[str, Any]:
    arrival = provider.fake.last
    assert arrival.status == 200, arrival.body
    assert validate(arrival.body, api=api, provider=rules) == []
    return arrival.body


def test_results_and_text_in_one_turn_reach_mistral_through_litellm(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    # mistralai/mistral-common#169: Claude Code's reminder next to a tool result.
    messages: list[Any] = [
        {"role": "user", "content": "Read the README."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": FILE},
                {"type": "text", "text": REMINDER},
            ],
        },
    ]
    model = providers["mistral"].model
    body = {"model": model, "max_tokens": 256, "messages": messages, "tools": TOOLS_MESSAGES}
    # Then the ids, which Mistral wants as 9 letters and digits.
    found = [v.rule for v in validate(body, api="anthropic-messages", provider="mistral")]
    assert found == ["mistral.M3", "mistral.M1", "mistral.M1"]
    anthropic_at(suture_url).messages.create(model=model, max_tokens=256, messages=messages, tools=TOOLS_MESSAGES)
    sent = _accepted(providers["mistral"], "openai-chat", "mistral")
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert FILE in str(sent["messages"][2]["content"]) and REMINDER in str(sent["messages"][4]["content"])


def test_thinking_only_turn_reaches_mistral_through_litellm(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "Plan the migration."},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Schema first.", "signature": "sig"}]},
        {"role": "user", "content": "Go on, keep it short."},
    ]
    model = providers["mistral"].model
    body = {"model": model, "max_tokens": 256, "messages": messages}
    assert [v.rule for v in validate(body, api="anthropic-messages", provider="mistral")] == ["mistral.M5"]
    raw = anthropic_at(suture_url).messages.with_raw_response.create(model=model, max_tokens=256, messages=messages)
    assert raw.headers["x-suture-repairs"] == "2"  # the thinking-only turn, then the users' merge
    sent = _accepted(providers["mistral"], "openai-chat", "mistral")
    assert [m["role"] for m in sent["messages"]] == ["user"]
    assert "Go on, keep it short." in str(sent["messages"][0]["content"])


def test_reasoning_no_answer_follows_reaches_mistral_through_litellm(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    # litellm's bridge gives reasoning that no call or answer follows an assistant message of its
    # own with no content, which Mistral refuses (M5); reasoning-without-answer (RS010) drops it.
    items: list[Any] = [
        {"type": "message", "role": "user", "content": "List the files."},
        {"type": "function_call", "call_id": "bR7sK2pQ9", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "bR7sK2pQ9", "output": FILE},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "The README is there."}]},
        {"type": "message", "role": "user", "content": "Only the README, please."},
    ]
    model = providers["mistral"].model
    body = {"model": model, "input": items}
    assert "mistral.M5" in [v.rule for v in validate(body, api="openai-responses", provider="mistral")]
    raw = openai_at(suture_url).responses.with_raw_response.create(model=model, input=items)
    assert raw.headers["x-suture-repairs"] == "2"  # the reasoning, then the bridge after the tool message
    sent = _accepted(providers["mistral"], "openai-chat", "mistral")
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert not any(
        m["role"] == "assistant" and m.get("content") is None and not m.get("tool_calls") for m in sent["messages"]
    )


def test_prefill_reaches_mistral_through_litellm(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "Answer in JSON: what is 2+2?"},
        {"role": "assistant", "content": '{"answer":'},
    ]
    model = providers["mistral"].model
    body = {"model": model, "max_tokens": 256, "messages": messages}
    assert [v.rule for v in validate(body, api="anthropic-messages", provider="mistral")] == ["mistral.M4"]
    anthropic_at(suture_url).messages.create(model=model, max_tokens=256, messages=messages)
    sent = _accepted(providers["mistral"], "openai-chat", "mistral")
    # Kept (it may be a prompt its author wrote), and the model asked to go on.
    assert [(m["role"], str(m["content"])) for m in sent["messages"]][1:] == [
        ("assistant", '{"answer":'),
        ("user", "Continue."),
    ]


def test_chat_history_starting_on_the_assistant_reaches_bedrock_through_litellm(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "assistant", "content": "Here is the plan: migrate the schema first."},
        {"role": "user", "content": "Go on."},
    ]
    model = providers["bedrock"].model
    body = {"model": model, "messages": messages, "tools": TOOLS_CHAT}
    assert [v.rule for v in validate(body, api="openai-chat", provider="bedrock")] == ["bedrock.B8"]
    openai_at(suture_url).chat.completions.create(model=model, messages=messages, tools=TOOLS_CHAT)
    sent = _accepted(providers["bedrock"], "bedrock-converse", "bedrock")
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["system"] == [{"text": "You are a coding agent."}]
