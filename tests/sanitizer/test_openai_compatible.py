"""Repairs for the OpenAI-compatible providers that the golden fixtures do not show on their own:
OpenRouter's upstreams, the fast path, and the policies the rules honour."""

from __future__ import annotations

from typing import Any

from sanitizer import Policy, sanitize, validate, validator_provider

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]


def call(ident: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": "search", "arguments": "{}"}}


def codes(body: dict[str, Any], provider: str | None = None, policy: Policy | None = None) -> list[str]:
    return [r.code for r in sanitize(body, api="openai-chat", provider=provider, policy=policy).repairs]


def valid(body: dict[str, Any], provider: str | None) -> bool:
    return validate(body, api="openai-chat", provider=validator_provider("openai-chat", provider)) == []


def test_openrouter_repairs_an_anthropic_model_by_anthropics_rules() -> None:
    body = {
        "model": "anthropic/claude-sonnet-4.5",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "there?"},
        ],
    }
    assert not valid(body, "openrouter")
    result = sanitize(body, api="openai-chat", provider="openrouter")
    assert [r.code for r in result.repairs] == ["AN003"]
    assert valid(result.body, "openrouter")
    # The same body is fine for an OpenAI model behind OpenRouter: nothing to do.
    openai_body = {**body, "model": "openai/gpt-4o"}
    assert sanitize(openai_body, api="openai-chat", provider="openrouter").body is openai_body


def test_openrouter_gives_a_mistral_model_mistral_ids_and_maps_them_back() -> None:
    body = {
        "model": "mistralai/devstral-medium",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call("call_abc_1")]},
            {"role": "tool", "tool_call_id": "call_abc_1", "content": "done"},
            {"role": "user", "content": "next"},
        ],
    }
    result = sanitize(body, api="openai-chat", provider="openrouter")
    assert [r.code for r in result.repairs] == ["PV001", "PV002"]
    assert list(result.restore_ids.values()) == ["call_abc_1"]
    assert valid(result.body, "openrouter")


def test_openrouter_fills_a_deepseek_models_reasoning_content() -> None:
    body = {
        "model": "deepseek/deepseek-v4-pro",
        "reasoning": {"enabled": True},
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
        ],
    }
    result = sanitize(body, api="openai-chat", provider="openrouter")
    assert result.body["messages"][1]["reasoning_content"] == ""
    assert valid(result.body, "openrouter")


def test_a_tool_message_without_an_id_follows_the_orphan_policy() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "news?"},
            {"role": "assistant", "content": ""},
            {"role": "tool", "content": "Rover finds signs of ancient life."},
            {"role": "user", "content": "and?"},
        ],
    }
    folded = sanitize(body, api="openai-chat")
    assert [m["role"] for m in folded.body["messages"]] == ["user", "assistant", "user", "user"]
    assert "Rover finds signs of ancient life." in folded.body["messages"][2]["content"]
    dropped = sanitize(body, api="openai-chat", policy=Policy(orphan_tool_result="drop"))
    assert [m["role"] for m in dropped.body["messages"]] == ["user", "assistant", "user"]
    assert "Rover finds signs of ancient life." in dropped.repairs[0].detail


def test_a_final_deepseek_answer_with_reasoning_is_not_dropped_by_the_drop_policy() -> None:
    body = {
        "model": "deepseek-reasoner",
        "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning_content": "r"}],
    }
    result = sanitize(body, api="openai-chat", provider="deepseek", policy=Policy(trailing_assistant="drop"))
    assert [r.code for r in result.repairs] == ["PV006"]
    assert "holds reasoning_content" in result.repairs[0].detail
    assert result.body["messages"][-1] == {"role": "user", "content": "Continue."}
    assert codes(body, "deepseek", Policy(trailing_assistant="keep")) == []


def test_moonshot_replaces_an_empty_reasoning_content_the_model_counts_as_missing() -> None:
    body = {
        "model": "kimi-k2.6",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "reasoning_content": "", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
        ],
    }
    result = sanitize(body, api="openai-chat", provider="moonshot")
    assert result.body["messages"][1]["reasoning_content"] == " "
    assert "counts as missing" in result.repairs[0].detail
    thinking_model = {**body, "model": "kimi-k2-thinking"}
    assert sanitize(thinking_model, api="openai-chat", provider="moonshot").body is thinking_model


def test_a_valid_vllm_conversation_is_forwarded_as_it_is() -> None:
    body = {
        "model": "Qwen/Qwen3-8B",
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": "q2"},
        ],
    }
    assert sanitize(body, api="openai-chat", provider="vllm").body is body
