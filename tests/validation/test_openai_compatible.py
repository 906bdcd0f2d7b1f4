"""The OpenAI-compatible providers' own texts: a tool message without its id, Azure's spelling,
MiniMax's "not found", DeepSeek's and Kimi's thinking models, vLLM's templates, OpenRouter's upstreams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sanitizer.validation import validate
from tests._support.builders import chat, oa, osys, ot, ou

OC = "openai-chat"
O2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
O9 = "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
D3 = "The `reasoning_content` in the thinking mode must be passed back to the API."
D5 = (
    "The last message of deepseek-reasoner must be a user message, or an assistant message with prefix mode on "
    "(refer to https://api-docs.deepseek.com/guides/chat_prefix_completion)."
)
X4 = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {n}"
V1_PLAIN = "Conversation roles must alternate user/assistant/user/assistant/..."
A5 = "messages.{n}: all messages must have non-empty content except for the optional final assistant message"


def unnamed(content: object = "ok", **extra: object) -> dict[str, Any]:
    """A tool message without its tool_call_id."""
    return {"role": "tool", "content": content, **extra}


def found(body: dict[str, Any], provider: str | None) -> list[tuple[str, str, int | None]]:
    return [(v.rule, v.message, v.message_index) for v in validate(body, api=OC, provider=provider)]


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        # A tool message without its id: OpenAI's schema error, before the pairing ones.
        pytest.param(None, chat(ou(), oa(None, "c1"), unnamed()), [("openai.O9", O9, 2)], id="O9-missing"),
        pytest.param(
            None,
            chat(ou(), oa(None, "c1"), unnamed(tool_call_id=None), oa("done")),
            [("openai.O9", O9, 2)],
            id="O9-null",
        ),
        pytest.param(
            "groq",
            chat(osys(), ou(), oa(""), unnamed("news")),
            [
                (
                    "groq.X5",
                    "'messages.3' : for 'role:tool' the following must be satisfied"
                    "[('messages.3.tool_call_id' : property 'tool_call_id' is missing)]",
                    3,
                ),
                ("openai.O9", O9, 3),
                ("openai.O2", O2, 3),
            ],
            id="groq-missing-id",
        ),
        pytest.param(
            "mistral",
            chat(ou(), oa(None, "abcDEF123"), unnamed(), oa("x"), ou()),
            [("mistral.M1", "Tool call id has to be defined.", 2)],
            id="mistral-missing-id",
        ),
        # Azure answers with OpenAI's spelling now.
        pytest.param("azure", chat(ou(), oa("hi"), ot("c9")), [("openai.O2", O2, 2)], id="azure-O2"),
        # MiniMax: a result whose id no call has, against one that is only out of place.
        pytest.param(
            "minimax",
            chat(ou(), oa("hi"), ot("c9"), ou()),
            [("minimax.X3", "invalid params, tool result's tool id(c9) not found (2013)", 2)],
            id="minimax-not-found",
        ),
        pytest.param(
            "minimax",
            chat(ou(), oa(None, "c1"), oa("wait"), ot("c1")),
            [
                ("minimax.X3", "invalid params, tool call result does not follow tool call (2013)", 1),
                ("minimax.X3", "invalid params, tool call result does not follow tool call (2013)", 3),
            ],
            id="minimax-out-of-order",
        ),
    ],
)
def test_tool_message_faults(provider: str | None, body: dict[str, Any], expected: list[Any]) -> None:
    # The first violations, in the provider's order; the pairing ones that follow are not the point.
    assert found(body, provider)[: len(expected)] == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # V4 models think unless told not to; OpenRouter's reasoning switch counts.
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek-v4-flash"), [("deepseek.D3", D3, 1)], id="v4-thinks"
        ),
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek-v4-flash", thinking={"type": "disabled"}),
            [],
            id="v4-thinking-disabled",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek-chat", reasoning={"effort": "high"}),
            [("deepseek.D3", D3, 1)],
            id="reasoning-effort",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1", reasoning_content=""), ot("c1"), model="deepseek-v4-pro"),
            [],
            id="empty-reasoning-taken",
        ),
        # D5: system messages after the last assistant turn do not end the conversation.
        pytest.param(
            chat(ou(), oa("cached"), osys("be professional"), model="deepseek-reasoner"),
            [("deepseek.D5", D5, 1)],
            id="D5-system-last",
        ),
        pytest.param(chat(ou(), osys("be professional"), model="deepseek-reasoner"), [], id="D5-user-then-system"),
        pytest.param(
            chat(ou(), oa(None, "c1", reasoning_content="r"), ot("c1"), model="deepseek-reasoner"),
            [],
            id="D5-tool-last",
        ),
    ],
)
def test_deepseek(body: dict[str, Any], expected: list[Any]) -> None:
    assert found(body, "deepseek") == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="kimi-k2.5"),
            [("moonshot.X4", X4.format(n=1), 1)],
            id="k25-thinks-by-default",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1", reasoning_content=""), ot("c1"), model="kimi-k2.6"),
            [("moonshot.X4", X4.format(n=1), 1)],
            id="k26-empty-is-missing",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1", reasoning_content=" "), ot("c1"), model="kimi-k2.6"), [], id="k26-space-taken"
        ),
        pytest.param(
            chat(ou(), oa(None, "c1", reasoning_content=""), ot("c1"), model="kimi-k2-thinking"),
            [],
            id="k2-thinking-takes-empty",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="kimi-k2.5", thinking={"type": "disabled"}),
            [],
            id="k25-thinking-disabled",
        ),
        pytest.param(chat(ou(), oa(None, "c1"), ot("c1"), model="kimi-k2-0905-preview"), [], id="k2-instruct"),
    ],
)
def test_moonshot(body: dict[str, Any], expected: list[Any]) -> None:
    assert found(body, "moonshot") == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            chat(osys(), ou(), model="TheBloke/Mistral-7B-Instruct-v0.2-AWQ"),
            [("vllm.V1", V1_PLAIN, 0), ("vllm.V1", V1_PLAIN, 1)],
            id="mistral-v02-no-system",
        ),
        pytest.param(
            chat(osys(), osys(), ou(), model="google/gemma-3-27b-it"),
            [("vllm.V1", V1_PLAIN, 1), ("vllm.V1", V1_PLAIN, 2)],
            id="gemma-second-system",
        ),
        pytest.param(
            chat(
                ou(),
                oa(None, "bR7sK2pQ9"),
                ot("bR7sK2pQ9"),
                ou(),
                model="mistralai/Mistral-Small-3.2-24B-Instruct-2506",
            ),
            [("mistral.M3", "Unexpected role 'user' after role 'tool'", 3)],
            id="mistral-common-M3",
        ),
        pytest.param(
            chat(
                ou(), oa(None, "call_long_id_1"), ot("call_long_id_1"), oa("x"), model="mistralai/Devstral-Small-2505"
            ),
            [],
            id="mistral-common-no-id-pattern",
        ),
        pytest.param(chat(ou(), ou(), model="Qwen/Qwen3-8B"), [], id="unknown-template"),
    ],
)
def test_vllm(body: dict[str, Any], expected: list[Any]) -> None:
    assert found(body, "vllm") == expected


def test_vllm_mistral_common_speaks_vllm_envelope() -> None:
    [v] = validate(chat(ou(), ot("abcDEF123"), model="mistralai/Magistral-Small-2509"), api=OC, provider="vllm")
    assert v.body == {
        "error": {
            "message": "Unexpected role 'tool' after role 'user'",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }


def _upstream(body: dict[str, Any] | list[Any]) -> tuple[str, Any]:
    assert isinstance(body, dict)
    error = body["error"]
    assert (error["message"], error["code"]) == ("Provider returned error", 400)
    return error["metadata"]["provider_name"], json.loads(error["metadata"]["raw"])


def test_openrouter_checks_anthropic_models_by_anthropic_rules() -> None:
    body = chat(ou(), oa(""), ou("still there?"), model="anthropic/claude-sonnet-4.5")
    [v] = validate(body, api=OC, provider="openrouter")
    assert (v.rule, v.message, v.message_index) == ("anthropic.A5", A5.format(n=1), 1)
    name, raw = _upstream(v.body)
    assert name == "Anthropic"
    assert raw == {"type": "error", "error": {"type": "invalid_request_error", "message": A5.format(n=1)}}


def test_openrouter_checks_anthropic_models_without_prefill_by_their_name() -> None:
    body = chat(ou(), oa("The answer is"), model="anthropic/claude-sonnet-4.6")
    assert [v.rule for v in validate(body, api=OC, provider="openrouter")] == ["anthropic.A17"]


@pytest.mark.parametrize(
    ("body", "provider_name", "rule"),
    [
        pytest.param(
            chat(ou(), oa(None, "Xy7Wv3Ts1"), ou(), ot("Xy7Wv3Ts1"), model="mistralai/devstral-medium"),
            "Mistral",
            "mistral.M3",
            id="mistral",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek/deepseek-v4-pro", reasoning={"enabled": True}),
            "DeepSeek",
            "deepseek.D3",
            id="deepseek",
        ),
        pytest.param(
            chat(ou(), oa(None, "c1"), ot("c1"), model="moonshotai/kimi-k2.5"),
            "Moonshot AI",
            "moonshot.X4",
            id="moonshot",
        ),
        pytest.param(chat(ou(), oa("hi"), ot("c9"), model="openai/gpt-4o-mini"), "OpenAI", "openai.O2", id="openai"),
        pytest.param(
            chat(ou(), oa("hi"), ot("c9"), model="meta-llama/llama-3.3-70b-instruct"), "OpenAI", "openai.O2", id="other"
        ),
    ],
)
def test_openrouter_applies_the_upstreams_rules(body: dict[str, Any], provider_name: str, rule: str) -> None:
    first = validate(body, api=OC, provider="openrouter")[0]
    assert first.rule == rule
    assert _upstream(first.body)[0] == provider_name


def test_openrouter_without_upstream_rules_is_clean_when_valid() -> None:
    assert validate(chat(ou(), oa(""), ou(), model="openai/gpt-4o"), api=OC, provider="openrouter") == []
