"""The emulator serves Cerebras's, DashScope's, llama.cpp's, Fireworks's, xAI's, Zhipu's, NVIDIA NIM's, LM Studio's,
Ollama's, SGLang's, SambaNova's and Together's checks at ``/{provider}/v1/chat/completions``,
their texts in their bodies; a transcript repaired for them is answered."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from sanitizer import sanitize
from sanitizer.rejection import refusal_message, repair_rejection
from tests._support.emulator import Emulator

REPLAYED_REASONING: dict[str, Any] = {
    "model": "gpt-oss-120b",
    "messages": [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "4", "reasoning_content": "Simple arithmetic."},
        {"role": "user", "content": "And 3+3?"},
    ],
}
TOOL_WITHOUT_CALL: dict[str, Any] = {
    "model": "qwen-plus",
    "messages": [
        {"role": "user", "content": "Query the database."},
        {"role": "tool", "tool_call_id": "call_q1", "content": "3 rows"},
    ],
}
CONSECUTIVE_USERS: dict[str, Any] = {
    "model": "gemma-3-27b-it",
    "messages": [
        {"role": "system", "content": "Translate."},
        {"role": "user", "content": "From English to French."},
        {"role": "user", "content": "Hello"},
    ],
}
COT_BOOKKEEPING: dict[str, Any] = {
    "model": "accounts/fireworks/models/glm-5p3-flash",
    "messages": [
        {"role": "user", "content": "Summarise the repo."},
        {"role": "assistant", "content": "It is a proxy.", "cot_id": "cot_1", "cot_summary": "Read the README."},
        {"role": "user", "content": "And the tests?"},
    ],
}
SEEDED_CALL_WITHOUT_ARGUMENTS: dict[str, Any] = {
    "model": "grok-2-1212",
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
}
NO_USER_MESSAGE: dict[str, Any] = {
    "model": "glm-4.6",
    "messages": [
        {"role": "system", "content": "You call tools for the user."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "createBuildings", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"success":false}'},
    ],
}
EMPTY_CALL_TURN_TEXT: dict[str, Any] = {
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
}
NO_USER_QUERY: dict[str, Any] = {
    "model": "qwen/qwen3.5-35b-a3b",
    "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "assistant", "content": "Summary of the work so far: the parser is fixed."},
    ],
}
LMSTUDIO_TEXT = (
    'Error rendering prompt with jinja template: "No user query found in messages.".\n\n'
    "This is usually an issue with the model's prompt template. If you are using a popular model, you can try "
    "to search the model under lmstudio-community, which will have fixed prompt templates. If you cannot find "
    "one, you are welcome to post this issue to our discord or issue tracker on GitHub. Alternatively, if you "
    "know how to write jinja templates, you can override the prompt template in My Models > model settings > "
    "Prompt Template."
)
NULL_CONTENT_WITHOUT_CALLS: dict[str, Any] = {
    "model": "qwen3-coder:30b",
    "messages": [
        {"role": "user", "content": "Explain src/index.ts."},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "Are you still there?"},
    ],
}
TOOL_MESSAGE_AFTER_NO_CALL: dict[str, Any] = {
    "model": "openai/gpt-oss-120b",
    "messages": [
        {"role": "user", "content": "Open the release notes."},
        {"role": "tool", "tool_call_id": "call_read_1", "content": "Release 2.1: faster startup."},
        {"role": "user", "content": "Well?"},
    ],
}
TEXT_PARTS: dict[str, Any] = {
    "model": "DeepSeek-V3.1",
    "messages": [
        {"role": "system", "content": [{"type": "text", "text": "You are Claude Code."}]},
        {"role": "user", "content": [{"type": "text", "text": "Add a --verbose flag."}]},
    ],
}
EXPECTED = {
    "cerebras": (
        REPLAYED_REASONING,
        {
            "message": "messages.1.assistant.reasoning_content: property "
            "'messages.1.assistant.reasoning_content' is unsupported",
            "type": "invalid_request_error",
            "param": "validation_error",
            "code": "wrong_api_format",
        },
    ),
    "dashscope": (
        TOOL_WITHOUT_CALL,
        {
            "error": {
                "code": "invalid_parameter_error",
                "param": None,
                "message": '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response '
                'to a preceeding message with "tool_calls".',
                "type": "invalid_request_error",
            }
        },
    ),
    "llamacpp": (
        CONSECUTIVE_USERS,
        {
            "error": {
                "code": 500,
                "message": "Conversation roles must alternate user/assistant/user/assistant/...",
                "type": "server_error",
            }
        },
    ),
    "fireworks": (
        COT_BOOKKEEPING,
        {
            "error": {
                "object": "error",
                "type": "invalid_request_error",
                "message": "Extra inputs are not permitted, field: 'messages[1].cot_id', value: 'cot_1'.",
            }
        },
    ),
    "xai": (
        SEEDED_CALL_WITHOUT_ARGUMENTS,
        {
            "code": "Client specified an invalid argument",
            "error": "The arguments to a tool_call with ID 'initial_list_datasets' are not a valid JSON string. "
            'Parsing error: Error("EOF while parsing a value", line: 1, column: 0)',
        },
    ),
    "zhipu": (
        NO_USER_MESSAGE,
        {"error": {"code": "1214", "message": "The messages parameter is illegal. Please check the documentation."}},
    ),
    "nim": (
        EMPTY_CALL_TURN_TEXT,
        {
            "error": {
                "message": "request: Value error, Empty content is not allowed for assistant messages",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
    ),
    "lmstudio": (NO_USER_QUERY, {"error": LMSTUDIO_TEXT}),
    "ollama": (
        NULL_CONTENT_WITHOUT_CALLS,
        {
            "error": {
                "message": "invalid message content type: <nil>",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "sglang": (
        TOOL_MESSAGE_AFTER_NO_CALL,
        {
            "object": "error",
            "message": "Message has tool role, but there was no previous assistant message with a tool call!",
            "type": "BadRequest",
            "param": None,
            "code": 400,
        },
    ),
    # The request's model in the text (musistudio/claude-code-router#965).
    "sambanova": (
        TEXT_PARTS,
        {
            "error": {
                "message": "Unable to tokenize message with status code 400 for model DeepSeek-V3.1: "
                "Invalid 'content' type. Expected one of: ['str'], got list.",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        },
    ),
}
# A chat template's refusal is a 500 (nextai-translator/raycast-openai-translator#34).
STATUS = {"llamacpp": 500}


@pytest.fixture(scope="module")
def http(emulator: Emulator) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url, headers={"authorization": "Bearer sk-test"}) as client:
        yield client


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_the_provider_s_refusal_in_its_own_body(http: httpx.Client, provider: str) -> None:
    body, refusal = EXPECTED[provider]
    answer = http.post(f"/{provider}/v1/chat/completions", json=body)
    assert answer.status_code == STATUS.get(provider, 400)
    assert answer.json() == refusal


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_the_repaired_transcript_is_answered(http: httpx.Client, provider: str) -> None:
    body, _ = EXPECTED[provider]
    repaired = sanitize(body, api="openai-chat", provider=provider)
    assert repaired.repairs
    answer = http.post(f"/{provider}/v1/chat/completions", json=repaired.body)
    assert answer.status_code == 200, answer.text


# vLLM's own Responses endpoint (gpt-oss): an output whose call is not earlier in input.
VLLM_ORPHAN_OUTPUT: dict[str, Any] = {
    "model": "openai/gpt-oss-120b",
    "input": [
        {"role": "user", "content": "Describe CVE-2024-1015."},
        {"type": "function_call_output", "call_id": "call_8280", "output": "{}"},
    ],
}


def test_vllm_s_responses_refusal_in_its_own_body(http: httpx.Client) -> None:
    answer = http.post("/vllm/v1/responses", json=VLLM_ORPHAN_OUTPUT)
    assert answer.status_code == 400
    assert answer.json() == {
        "error": {
            "message": "No call message found for call_8280 None",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }


def test_vllm_s_repaired_responses_transcript_is_answered(http: httpx.Client) -> None:
    repaired = sanitize(VLLM_ORPHAN_OUTPUT, api="openai-responses", provider="vllm")
    assert [r.code for r in repaired.repairs] == ["TP004"]
    answer = http.post("/vllm/v1/responses", json=repaired.body)
    assert answer.status_code == 200, answer.text


# Together's inferred refusal (mozilla-ai/any-llm#714): tool messages that carry ``name``. Suture's
# validator does not know it; the portable profile, escalated to on the refusal, clears it.
NAMED_TOOL_MESSAGE: dict[str, Any] = {
    "model": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    "messages": [
        {"role": "user", "content": "What is the weather in Lisbon?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_w1", "name": "weather", "content": "sunny"},
    ],
}


def test_together_s_inferred_refusal_names_nothing_and_the_portable_profile_clears_it(http: httpx.Client) -> None:
    answer = http.post("/together/v1/chat/completions", json=NAMED_TOOL_MESSAGE)
    assert answer.status_code == 400
    assert answer.json() == {"message": "Input validation error", "type_": "invalid_request_error"}
    assert sanitize(NAMED_TOOL_MESSAGE, api="openai-chat", provider="together").repairs == []
    message = refusal_message(answer.json())
    assert message == "Input validation error"
    fixed = repair_rejection(NAMED_TOOL_MESSAGE, api="openai-chat", status=400, message=message, provider="together")
    assert fixed.strategy == "portable-profile", fixed.why
    assert fixed.body is not None and "name" not in fixed.body["messages"][2]
    assert fixed.body["messages"][2]["content"] == "sunny"
    assert http.post("/together/v1/chat/completions", json=fixed.body).status_code == 200
