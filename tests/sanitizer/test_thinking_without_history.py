"""AN022 thinking-without-history: a request with Claude's thinking on whose last tool round's
assistant turn holds no thinking block goes without thinking, the transcript untouched.

Anthropic's refusal, word for word (Kilo-Org/kilocode#5219, anomalyco/opencode#3077 and #8010):
the validator reports it for Anthropic bodies (manual thinking: enabled), Bedrock Converse
bodies (``additionalModelRequestFields.thinking``) and Chat bodies a gateway sends to Claude
(``thinking`` or ``reasoning_effort``); the rule repairs each, as far as the model lets thinking
be turned off, and the rejection repair reaches it through the violation code.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sanitizer import Policy, PolicyError, looks_clean, model_capabilities, sanitize, validate
from sanitizer.rejection import repair_rejection
from sanitizer.validation._anthropic import A13

API = "anthropic-messages"
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS = [{"name": "ls", "input_schema": {"type": "object"}}]
CALL = {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
SIGNED = {"type": "thinking", "thinking": "List the files.", "signature": "EqQBCkgIARABGAIiQL4s"}


def body(
    model: str | None = "claude-sonnet-4-5", thinking: Any = THINKING, first: Any = CALL, **extra: Any
) -> dict[str, Any]:
    b: dict[str, Any] = {
        "max_tokens": 2048,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": [first] if first is CALL else [first, CALL]},
            {"role": "user", "content": [RESULT]},
        ],
        **extra,
    }
    if model is not None:
        b["model"] = model
    if thinking is not None:
        b["thinking"] = thinking
    return b


def codes(found: list[Any]) -> list[str]:
    return [v.rule for v in found]


# --- The validator: Anthropic's text -------------------------------------------------------------


def test_the_validator_names_anthropics_text_for_manual_thinking() -> None:
    [found] = validate(body(thinking=THINKING), api=API)
    assert (found.rule, found.message, found.message_index) == (
        "anthropic.A13",
        A13.format(n=1, found="tool_use"),
        1,
    )
    assert found.message.startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
        "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
        "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
        "previous turns. To avoid this requirement, disable `thinking`."
    )
    assert validate(body(thinking=None), api=API) == []
    assert validate(body(thinking={"type": "disabled"}), api=API) == []


def test_adaptive_thinking_takes_a_turn_the_model_wrote_without_thinking() -> None:
    # Adaptive thinking lets the model skip a turn's thinking (Claude Code on Opus 4.8 sends such
    # turns in every tool loop): the API takes the turn, so nothing is reported or changed.
    adaptive = body(model="claude-opus-4-8", thinking={"type": "adaptive"})
    assert validate(adaptive, api=API) == []
    assert sanitize(adaptive, api=API).repairs == []
    assert looks_clean(adaptive, api=API)


def converse(model_fields: dict[str, Any] | None, *, reasoning: bool = False) -> dict[str, Any]:
    assistant: list[dict[str, Any]] = [{"toolUse": {"toolUseId": "t1", "name": "ls", "input": {}}}]
    if reasoning:
        assistant.insert(0, {"reasoningContent": {"reasoningText": {"text": "ls", "signature": "sig"}}})
    b: dict[str, Any] = {
        "toolConfig": {"tools": [{"toolSpec": {"name": "ls", "inputSchema": {"json": {"type": "object"}}}}]},
        "messages": [
            {"role": "user", "content": [{"text": "list the files"}]},
            {"role": "assistant", "content": assistant},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "x"}]}}]},
        ],
    }
    if model_fields is not None:
        b["additionalModelRequestFields"] = model_fields
    return b


def test_the_validator_names_it_for_bedrock_converse_and_claude_only() -> None:
    fields = {"thinking": THINKING}
    [found] = validate(converse(fields), api="bedrock-converse")
    assert (found.rule, found.message, found.message_index) == ("anthropic.A13", A13.format(n=1, found="tool_use"), 1)
    assert validate(converse(fields), api="bedrock-converse", model="us.anthropic.claude-sonnet-4-5-v1:0") != []
    assert validate(converse(fields, reasoning=True), api="bedrock-converse") == []
    assert validate(converse(None), api="bedrock-converse") == []
    # Bedrock's DeepSeek takes the field and ignores it (calebevans/mulder#193).
    assert validate(converse(fields), api="bedrock-converse", model="us.deepseek.v3-2-v1:0") == []


def chat(**extra: Any) -> dict[str, Any]:
    # anomalyco/opencode#3077: system, user, the assistant's call without thinking_blocks, its result.
    return {
        "model": "claude-4-5-sonnet",
        "tools": [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}],
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": "list the files"},
            {"role": "assistant", "content": None, "tool_calls": [_chat_call()]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "x"},
        ],
        **extra,
    }


def _chat_call() -> dict[str, Any]:
    return {"id": "toolu_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
@pytest.mark.parametrize("asked", [{"thinking": THINKING}, {"reasoning_effort": "medium"}], ids=["thinking", "effort"])
def test_the_validator_names_it_for_a_chat_body_a_gateway_sends_to_claude(provider: str, asked: dict[str, Any]) -> None:
    [found] = validate(chat(**asked), api="openai-chat", provider=provider)
    # The converted index in the text (the system message is a parameter there), the Chat one in the record.
    assert (found.rule, found.message, found.message_index) == ("anthropic.A13", A13.format(n=1, found="tool_use"), 2)
    assert validate(chat(), api="openai-chat", provider=provider) == []
    assert validate(chat(reasoning_effort="none"), api="openai-chat", provider=provider) == []
    kept = chat(**asked)
    kept["messages"][2]["thinking_blocks"] = [SIGNED]
    assert validate(kept, api="openai-chat", provider=provider) == []


# --- The repair -----------------------------------------------------------------------------------


def test_thinking_goes_for_the_request_and_no_message_is_touched() -> None:
    before = body(context_management={"edits": [{"type": "clear_thinking_20251015"}]})
    pristine = copy.deepcopy(before)
    result = sanitize(before, api=API)
    assert before == pristine
    assert "thinking" not in result.body
    # The clear_thinking edit "requires `thinking` to be enabled" (anthropics/claude-code#11971).
    assert "context_management" not in result.body
    assert result.body["messages"] == before["messages"]
    assert all(a is b for a, b in zip(result.body["messages"], before["messages"], strict=True))
    [repair] = result.repairs
    assert (repair.code, repair.rule, repair.action, repair.message_index) == (
        "AN022",
        "thinking-without-history",
        "disabled",
        None,
    )
    assert repair.detail.startswith("disabled thinking for this request only")
    assert 'removed thinking {"budget_tokens":1024,"type":"enabled"}' in repair.detail
    assert '[{"type":"clear_thinking_20251015"}], which requires thinking' in repair.detail
    assert "(message 1)" in repair.detail
    assert validate(result.body, api=API) == []
    assert sanitize(result.body, api=API).repairs == []


def test_the_other_context_edits_and_settings_stay() -> None:
    edits = [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]
    result = sanitize(body(context_management={"edits": edits}, output_config={"effort": "low"}), api=API)
    assert result.body["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}
    # Effort steers every answer, with thinking or without.
    assert result.body["output_config"] == {"effort": "low"}


def test_policy_leave_forwards_the_request_as_it_is() -> None:
    policy = Policy(thinking_without_history="leave")
    before = body()
    result = sanitize(before, api=API, policy=policy)
    assert result.repairs == [] and result.body is before
    assert looks_clean(before, api=API, policy=policy)
    assert codes(validate(before, api=API)) == ["anthropic.A13"]
    with pytest.raises(PolicyError, match="thinking_without_history must be 'disable' or 'leave', not 'drop'"):
        Policy.from_mapping({"thinking_without_history": "drop"})


@pytest.mark.parametrize(
    ("model", "provider", "thinks"),
    [
        ("claude-opus-5", "anthropic", True),
        ("claude-haiku-5-5", "anthropic", True),
        ("us.anthropic.claude-sonnet-5-v1:0", "bedrock", True),
        ("claude-opus-4-7", "anthropic", False),
        ("claude-opus-4-8", "anthropic", False),
        ("claude-opus-4-6", "anthropic", False),
        # A gateway's alias: leaving the field out is the one repair that can pass.
        ("a-gateway-alias", "anthropic", False),
    ],
)
def test_a_model_that_thinks_unasked_is_told_not_to(model: str, provider: str, thinks: bool) -> None:
    assert model_capabilities(provider, model).thinking_on_by_default is thinks
    result = sanitize(body(model=model, thinking=THINKING), api=API, provider=provider)
    assert result.body.get("thinking") == ({"type": "disabled"} if thinks else None)
    assert validate(result.body, api=API, provider=provider) == []


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-fable-5", "anthropic"),
        ("claude-mythos-5-1", "anthropic"),
        ("claude-opus-5-5", "anthropic"),
        ("claude-sonnet-5-5", "anthropic"),
        ("claude-mythos-preview", "anthropic"),
        ("us.anthropic.claude-opus-5-5-v1:0", "bedrock"),
        ("claude-fable-5-1@20260601", "vertex"),
    ],
)
def test_a_model_that_always_thinks_is_left_alone(model: str, provider: str) -> None:
    # "disabled" is refused there, and leaving the field out leaves thinking on: nothing passes.
    assert model_capabilities(provider, model).thinking_always_on
    before = body(model=model, thinking=THINKING)
    assert sanitize(before, api=API, provider=provider).repairs == []
    assert looks_clean(before, api=API, provider=provider)


def test_a_turn_that_holds_thinking_anywhere_is_left_to_thinking_not_first() -> None:
    # [text, thinking, tool_use]: thinking-not-first moves the block; no thinking is lost.
    before = body(first={"type": "text", "text": "Let me look."})
    before["messages"][1]["content"] = [{"type": "text", "text": "Let me look."}, SIGNED, CALL]
    assert [r.code for r in sanitize(before, api=API).repairs] == ["AN011"]
    assert [r.code for r in sanitize(body(first=SIGNED), api=API).repairs] == []


def test_the_fast_path_sees_it() -> None:
    assert not looks_clean(body(), api=API)
    assert looks_clean(body(first=SIGNED), api=API)
    assert looks_clean(body(thinking=None), api=API)


def test_bedrock_converse_keeps_its_other_additional_fields() -> None:
    fields = {"thinking": THINKING, "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    result = sanitize(converse(fields), api="bedrock-converse")
    assert result.body["additionalModelRequestFields"] == {"anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    assert [r.code for r in result.repairs] == ["AN022"]
    alone = sanitize(converse({"thinking": THINKING}), api="bedrock-converse")
    assert "additionalModelRequestFields" not in alone.body
    assert not looks_clean(converse({"thinking": THINKING}), api="bedrock-converse")
    assert (
        sanitize(converse({"thinking": THINKING}), api="bedrock-converse", model="us.deepseek.v3-2-v1:0").repairs == []
    )


def test_a_chat_body_for_claude_loses_its_reasoning_effort_or_thinking() -> None:
    result = sanitize(chat(reasoning_effort="high"), api="openai-chat", provider="anthropic")
    assert "reasoning_effort" not in result.body
    assert 'removed reasoning_effort "high"' in result.repairs[0].detail
    # A model that thinks unasked is told not to in Claude's own words, which LiteLLM passes on.
    five = sanitize(chat(model="claude-sonnet-5", reasoning_effort="high"), api="openai-chat", provider="anthropic")
    assert five.body["thinking"] == {"type": "disabled"} and "reasoning_effort" not in five.body
    # Bound for OpenAI, reasoning_effort is o-series reasoning, which asks for nothing back.
    assert sanitize(chat(reasoning_effort="high"), api="openai-chat").repairs == []
    assert sanitize(chat(reasoning_effort="high"), api="openai-chat", provider="openrouter").repairs == []


def test_an_anthropic_body_bound_for_a_chat_provider_or_deepseek_is_not_its_concern() -> None:
    for provider in ("openai", "mistral", "deepseek"):
        assert "AN022" not in [r.code for r in sanitize(body(), api=API, provider=provider).repairs]


# --- The rejection repair reaches it through the violation code ---------------------------------


def test_anthropics_refusal_is_repaired_by_the_rule() -> None:
    outcome = repair_rejection(
        body(), api=API, status=400, message=A13.format(n=1, found="tool_use"), provider="anthropic"
    )
    assert (outcome.strategy, outcome.codes, [r.code for r in outcome.repairs]) == (
        "rules",
        ("anthropic.A13",),
        ["AN022"],
    )
    assert outcome.body is not None and "thinking" not in outcome.body


def test_litellms_relay_of_bedrocks_refusal_of_a_chat_body_is_repaired_by_the_rule() -> None:
    # anomalyco/opencode#3077, as LiteLLM relayed it.
    message = (
        'litellm.BadRequestError: BedrockException - {"message":"The model returned the following errors: '
        + A13.format(n=1, found="tool_use")
        + '"}'
    )
    outcome = repair_rejection(
        chat(thinking=THINKING), api="openai-chat", status=400, message=message, provider="openai"
    )
    assert [r.code for r in outcome.repairs] == ["AN022"]
    assert outcome.body is not None and "thinking" not in outcome.body


def test_openrouters_reasoning_details_count_as_the_turns_thinking() -> None:
    # OpenRouter rebuilds Claude's blocks from reasoning_details (OpenRouterTeam/ai-sdk-provider#177
    # quotes the refusal when they are missing).
    lost = chat(model="anthropic/claude-sonnet-4.5", reasoning_effort="high")
    assert codes(validate(lost, api="openai-chat", provider="openrouter")) == ["anthropic.A13"]
    assert [r.code for r in sanitize(lost, api="openai-chat", provider="openrouter").repairs] == ["AN022"]
    kept = copy.deepcopy(lost)
    kept["messages"][2]["reasoning_details"] = [
        {
            "type": "reasoning.text",
            "text": "List the files.",
            "signature": "EqQBCkgIARABGAIiQL4s",
            "format": "anthropic-claude-v1",
        }
    ]
    assert validate(kept, api="openai-chat", provider="openrouter") == []
    assert sanitize(kept, api="openai-chat", provider="openrouter").repairs == []
