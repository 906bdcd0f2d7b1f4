"""A named upstream with ``provider: cerebras``, ``dashscope``, ``llamacpp``, ``fireworks``, ``xai``, ``zhipu``, ``nim``,
``lmstudio``, ``ollama``, ``sglang`` or ``sambanova`` gets that provider's
repairs, and its strict mode that provider's refusal, against the emulator's strict profile; one with
``provider: together``, whose refusal names nothing, is repaired from the refusal and learns the fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import Settings
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import captured_logs, suture, wait_for
from tests._support.servers import running_server

CASES: dict[str, dict[str, Any]] = {
    "cerebras": {
        "model": "zai-glm-4.7",
        "messages": [
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "4", "reasoning_content": "Simple arithmetic."},
            {"role": "user", "content": "And 3+3?"},
        ],
    },
    "dashscope": {
        "model": "qwen-plus",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
            },
            {"role": "user", "content": "Never mind, London."},
        ],
    },
    "llamacpp": {
        "model": "devstral-small-2",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "user", "content": "(reminder)"},
            {"role": "user", "content": "hello"},
        ],
    },
    "fireworks": {
        "model": "accounts/fireworks/models/glm-5p3-flash",
        "messages": [
            {"role": "user", "content": "Summarise the repo."},
            {"role": "assistant", "content": "It is a proxy.", "cot_id": "cot_1", "cot_summary": "Read the README."},
            {"role": "user", "content": "And the tests?"},
        ],
    },
    "xai": {
        "model": "grok-4",
        "messages": [
            {"role": "user", "content": "What is the capital of New York?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "initial_list_datasets",
                        "type": "function",
                        "function": {"name": "list_datasets", "arguments": ""},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "initial_list_datasets", "content": "taxi_trips"},
        ],
    },
    "zhipu": {
        "model": "glm-4.6",
        "messages": [
            {"role": "system", "content": "You call tools for the user."},
            {"role": "assistant", "content": "A subagent reported: the schema is migrated."},
        ],
    },
    "nim": {
        "model": "google/diffusiongemma-26b-a4b-it",
        "messages": [
            {"role": "user", "content": "What time is it in Tokyo?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_t1",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"tz":"Asia/Tokyo"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_t1", "content": "09:12"},
        ],
    },
    "lmstudio": {
        "model": "qwen3.6-27b",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "assistant", "content": "Summary of the work so far: the parser is fixed."},
        ],
    },
    "ollama": {
        "model": "qwen3:8b",
        "messages": [
            {"role": "user", "content": "List the files."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "call_ls", "type": "function", "function": {"name": "ls", "arguments": ""}}],
            },
            {"role": "tool", "tool_call_id": "call_ls", "content": "a.py b.py"},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I won't open b.py."}]},
            {"role": "user", "content": "Why not?"},
        ],
    },
    "sglang": {
        "model": "openai/gpt-oss-120b",
        "messages": [
            {"role": "system", "content": "You are a browsing agent."},
            {"role": "user", "content": "Open the release notes."},
            {"role": "tool", "tool_call_id": "call_read_1", "content": "Release 2.1: faster startup."},
            {"role": "user", "content": "Well?"},
        ],
    },
    "sambanova": {
        "model": "DeepSeek-V3.1",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "You are Claude Code."}]},
            {"role": "user", "content": [{"type": "text", "text": "Add a --verbose flag."}]},
        ],
    },
}
# What the user said and what a tool returned, which the repaired request must still hold.
KEPT = {
    "ollama": ("List the files.", "a.py b.py", "I won't open b.py.", "Why not?"),
    "sglang": ("Open the release notes.", "Release 2.1: faster startup.", "Well?"),
    "sambanova": ("You are Claude Code.", "Add a --verbose flag."),
}


@pytest.fixture(scope="module")
def emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig())) as url:
        yield url


def _settings(emulator: str, provider: str, **extra: Any) -> dict[str, Any]:
    upstream = {"protocol": "openai", "base_url": f"{emulator}/{provider}/v1", "provider": provider}
    return {"upstreams": {provider: upstream}, "routes": [{"match": "*", "upstream": provider}], **extra}


def test_the_settings_take_the_new_provider_names() -> None:
    for provider in CASES:
        settings = Settings(**_settings("http://127.0.0.1:9", provider))
        assert settings.upstreams[provider].provider == provider


@pytest.mark.parametrize("provider", sorted(CASES))
def test_refused_as_sent_and_answered_through_suture(emulator: str, provider: str) -> None:
    body = CASES[provider]
    direct = httpx.post(f"{emulator}/{provider}/v1/chat/completions", json=body, headers={"authorization": "Bearer k"})
    assert direct.status_code == (500 if provider == "llamacpp" else 400)
    with suture(**_settings(emulator, provider)) as url:
        answer = httpx.post(f"{url}/v1/chat/completions", json=body, headers={"authorization": "Bearer k"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-suture-repairs"] != "0"


@pytest.mark.parametrize("provider", ["xai", "zhipu", "nim", "lmstudio", "ollama", "sglang", "sambanova"])
def test_the_official_sdk_gets_an_answer_through_suture(emulator: str, provider: str) -> None:
    # What an agent built on the openai SDK sees: the provider's refusal directly, an answer through Suture.
    body = CASES[provider]
    direct = openai.OpenAI(base_url=f"{emulator}/{provider}/v1", api_key="k", max_retries=0)
    with direct, pytest.raises(openai.BadRequestError):
        direct.chat.completions.create(**body)
    with suture(**_settings(emulator, provider)) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="k") as client:
        completion = client.chat.completions.create(**body)
    assert completion.choices[0].message.role == "assistant"


STRICT = {
    "cerebras": "cerebras.unsupported-property: messages.1.assistant.reasoning_content: property "
    "'messages.1.assistant.reasoning_content' is unsupported",
    "dashscope": "dashscope.X2: <400> InternalError.Algo.InvalidParameter: An assistant message with",
    "llamacpp": "llamacpp.template-role-order: After the optional system message, conversation roles must "
    "alternate user and assistant roles except for tool calls and results.",
    "fireworks": "fireworks.extra-input: Extra inputs are not permitted, field: 'messages[1].cot_id', value: 'cot_1'.",
    "xai": "xai.arguments-not-json: The arguments to a tool_call with ID 'initial_list_datasets' are not a valid "
    'JSON string. Parsing error: Error("EOF while parsing a value", line: 1, column: 0)',
    "zhipu": "zhipu.1214-no-user-message: The messages parameter is illegal. Please check the documentation.",
    "nim": "nim.empty-assistant-content: request: Value error, Empty content is not allowed for assistant messages",
    "lmstudio": 'lmstudio.no-user-query: Error rendering prompt with jinja template: "No user query found in messages.".',
    "ollama": "ollama.invalid-tool-call-arguments: invalid tool call arguments",
    "sglang": "sglang.tool-role-without-call: Message has tool role, but there was no previous assistant message "
    "with a tool call!",
    "sambanova": "sambanova.content-not-string: Unable to tokenize message with status code 400 for model "
    "DeepSeek-V3.1: Invalid 'content' type. Expected one of: ['str'], got list.",
}


@pytest.mark.parametrize("provider", sorted(CASES))
def test_strict_mode_names_the_provider_s_own_refusal(emulator: str, provider: str) -> None:
    # Strict mode answers on the client's route (OpenAI's Chat shape), listing what the upstream's
    # provider would refuse in its own words.
    with suture(**_settings(emulator, provider, mode="strict")) as url:
        answer = httpx.post(f"{url}/v1/chat/completions", json=CASES[provider], headers={"authorization": "Bearer k"})
    assert answer.status_code == 400
    assert STRICT[provider] in answer.json()["error"]["message"]


@pytest.mark.parametrize("provider", sorted(KEPT))
def test_nothing_the_user_said_or_a_tool_returned_is_lost(tmp_path: Path, provider: str) -> None:
    record = tmp_path / "emulator.jsonl"
    with running_server(build_emulator_app(EmulatorConfig(record_path=record))) as emu:
        with suture(**_settings(emu, provider)) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="k") as client:
            client.chat.completions.create(**CASES[provider])
        [sent] = [r["body"] for r in recorded_requests(record)]
    assert [r["status"] for r in recorded_requests(record)] == [200]
    for text in KEPT[provider]:
        assert text in str(sent), text


# Together's one public refusal names nothing (mozilla-ai/any-llm#714): an agent loop whose tool
# messages carry ``name``. The emulator makes it; no rule is bound for it, so Suture repairs it from
# the refusal (the portable profile) and learns the fix for the upstream.
def together_loop(turn: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "What is the weather in Salvaterra de Magos?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_w1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"location": "Salvaterra de Magos"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_w1", "name": "get_weather", "content": "sunny, 24 C"},
        {"role": "user", "content": f"And tomorrow? (turn {turn})"},
    ]


def test_together_refuses_directly_and_suture_learns_the_portable_profile(tmp_path: Path) -> None:
    record = tmp_path / "emulator.jsonl"
    model = "meta-llama/Llama-3.3-70B-Instruct-Turbo"
    with running_server(build_emulator_app(EmulatorConfig(record_path=record))) as emu:
        direct = openai.OpenAI(base_url=f"{emu}/together/v1", api_key="k", max_retries=0)
        with direct, pytest.raises(openai.BadRequestError) as refused:
            direct.chat.completions.create(model=model, messages=together_loop(0))  # type: ignore[arg-type]
        assert refused.value.body == {"message": "Input validation error", "type_": "invalid_request_error"}
        record.unlink()
        settings = _settings(emu, "together", capture={"dir": str(tmp_path / "captures")})
        with (
            captured_logs() as logs,
            suture(**settings) as url,
            openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client,
        ):
            # The first request pays one refusal, repaired by the portable profile.
            first = client.chat.completions.create(model=model, messages=together_loop(1))  # type: ignore[arg-type]
            assert first.choices[0].message.role == "assistant"
            assert [r["status"] for r in recorded_requests(record)] == [400, 200]
            assert wait_for(lambda: logs.records("suture.repair", "fix learnt"))
            # Learnt: the next turn reaches the upstream once, repaired before its first attempt.
            second = client.chat.completions.create(model=model, messages=together_loop(2))  # type: ignore[arg-type]
            assert second.choices[0].message.role == "assistant"
    sent = recorded_requests(record)
    assert [r["status"] for r in sent] == [400, 200, 200]
    messages = sent[-1]["body"]["messages"]
    assert [m for m in messages if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": "call_w1", "content": "sunny, 24 C"}
    ]
    assert [m["content"] for m in messages if m["role"] == "user"] == [
        "What is the weather in Salvaterra de Magos?",
        "And tomorrow? (turn 2)",
    ]


# vLLM's own Responses endpoint (gpt-oss, its Harmony path): an output whose call is not in input.
VLLM_RESPONSES: dict[str, Any] = {
    "model": "openai/gpt-oss-120b",
    "input": [
        {"role": "user", "content": "Describe CVE-2024-1015."},
        {"type": "function_call_output", "call_id": "call_8280", "output": "{}"},
    ],
}


def test_vllm_responses_refused_directly_and_answered_through_suture(emulator: str) -> None:
    direct = httpx.post(f"{emulator}/vllm/v1/responses", json=VLLM_RESPONSES, headers={"authorization": "Bearer k"})
    assert direct.status_code == 400
    assert direct.json() == {
        "error": {
            "message": "No call message found for call_8280 None",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }
    sdk = openai.OpenAI(base_url=f"{emulator}/vllm/v1", api_key="k", max_retries=0)
    with sdk, pytest.raises(openai.BadRequestError):
        sdk.responses.create(**VLLM_RESPONSES)
    with suture(**_settings(emulator, "vllm")) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="k") as client:
        response = client.responses.create(**VLLM_RESPONSES)
    assert response.status == "completed"
