"""Cerebras's, DashScope's, llama.cpp's and Fireworks's own checks and texts, in their own error bodies: providers reached
through an OpenAI-compatible base URL that refuse what OpenAI takes, or word OpenAI's rules their way."""

from __future__ import annotations

from typing import Any

import pytest

from sanitizer import sanitize
from sanitizer.validation import error_envelope, validate
from tests._support.builders import chat, oa, ot, ou

OC = "openai-chat"
CEREBRAS_LINE = (
    "messages.{n}.assistant.reasoning_content: property 'messages.{n}.assistant.reasoning_content' is unsupported"
)
DS = "<400> InternalError.Algo.InvalidParameter: "
DS_ORPHAN = DS + 'messages with role "tool" must be a response to a preceeding message with "tool_calls".'
DS_MISSING = (
    DS + 'An assistant message with "tool_calls" must be followed by tool messages responding to each '
    '"tool_call_id". The following tool_call_ids did not have response messages: message[{n}].role'
)
O3 = "Invalid parameter: 'tool_call_id' of 'c9' not found in 'tool_calls' of previous message."


def thought(content: str, reasoning: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "reasoning_content": reasoning, **extra}


def found(body: dict[str, Any], provider: str) -> list[tuple[str, str, int | None]]:
    return [(v.rule, v.message, v.message_index) for v in validate(body, api=OC, provider=provider)]


def test_cerebras_lists_every_replayed_reasoning_content_in_one_error_of_its_own_shape() -> None:
    body = chat(ou(), thought("4", "2+2"), ou("and?"), thought("6", "3+3"), ou("thanks"))
    [violation] = validate(body, api=OC, provider="cerebras")
    text = CEREBRAS_LINE.format(n=1) + "\n" + CEREBRAS_LINE.format(n=3)
    assert (violation.rule, violation.message, violation.message_index) == ("cerebras.unsupported-property", text, 1)
    # Kilo-Org/kilocode#10375: no "error" wrapper.
    assert violation.body == {
        "message": text,
        "type": "invalid_request_error",
        "param": "validation_error",
        "code": "wrong_api_format",
    }


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(chat(ou(), {"role": "assistant", "content": "4", "reasoning": "2+2"}, ou("and?")), id="reasoning"),
        pytest.param(chat(ou(), oa(None, "c1"), ot("c1"), oa("done")), id="tool-loop"),
    ],
)
def test_cerebras_takes_its_own_reasoning_field_and_a_paired_tool_loop(body: dict[str, Any]) -> None:
    assert found(body, "cerebras") == []


def test_cerebras_words_an_orphan_tool_message_its_own_way_and_the_rest_as_openai() -> None:
    assert found(chat(ou(), ot("c9")), "cerebras") == [
        (
            "cerebras.orphan-tool-message",
            "Messages with role 'tool' must be a response to a preceeding message with 'tool_calls'",
            1,
        )
    ]
    assert found(chat(ou(), oa(None, "c1"), ot("c9")), "cerebras")[1] == ("openai.O3", O3, 2)


def test_other_providers_take_reasoning_content() -> None:
    body = chat(ou(), thought("4", "2+2"), ou("and?"))
    assert found(body, "openai") == found(body, "dashscope") == []


def test_dashscope_words_openai_s_pairing_rules_its_own_way() -> None:
    assert found(chat(ou(), ot("c9")), "dashscope") == [("dashscope.X2", DS_ORPHAN, 1)]
    unanswered = chat(ou(), oa("checking", "c1"), ou("never mind"))
    assert found(unanswered, "dashscope") == [("dashscope.X2", DS_MISSING.format(n=1), 1)]
    assert found(chat(ou(), oa(None, "c1"), ot("c1"), ot("c9")), "dashscope") == [("openai.O3", O3, 3)]


def test_dashscope_refuses_an_empty_tool_calls_list() -> None:
    body = chat(ou(), {"role": "assistant", "content": "hello", "tool_calls": []}, ou("again"))
    assert found(body, "dashscope") == [("dashscope.X2", DS + "Empty tool_calls is not supported in message.", 1)]


def test_dashscope_s_error_body() -> None:
    [violation] = validate(chat(ou(), ot("c9")), api=OC, provider="dashscope")
    # philschmid/mcp-openai-gemini-llama-example PR#5, without DashScope's per-request ids.
    assert violation.body == {
        "error": {
            "code": "invalid_parameter_error",
            "param": None,
            "message": DS_ORPHAN,
            "type": "invalid_request_error",
        }
    }
    status, body, _ = error_envelope(OC, "dashscope", "no key", status=401)
    assert status == 401 and body == {
        "error": {"code": "authentication_error", "param": None, "message": "no key", "type": "authentication_error"}
    }
    assert error_envelope(OC, "cerebras", "slow down", status=429)[1] == {
        "message": "slow down",
        "type": "rate_limit_error",
        "param": None,
        "code": None,
    }


@pytest.mark.parametrize("provider", ["cerebras", "dashscope", "llamacpp", "fireworks"])
def test_a_valid_request_takes_the_fast_path(provider: str) -> None:
    body = chat(ou(), oa(None, "c1"), ot("c1"), oa("done"), ou("thanks"))
    result = sanitize(body, api=OC, provider=provider)
    assert result.body is body and result.repairs == []


LC_ALTERNATE = (
    "After the optional system message, conversation roles must alternate user and assistant roles "
    "except for tool calls and results."
)


def test_llamacpp_asks_an_assistant_message_for_content_or_tool_calls() -> None:
    reasoning_only = chat(ou(), {"role": "assistant", "reasoning_content": "thinking"}, ou("again"))
    no_content = "Assistant message must contain either 'content' or 'tool_calls'!"
    assert found(reasoning_only, "llamacpp") == [("llamacpp.empty-assistant", no_content, 1)]
    [violation] = validate(reasoning_only, api=OC, provider="llamacpp")
    assert violation.status == 400
    assert violation.body == {"error": {"code": 400, "message": no_content, "type": "invalid_request_error"}}
    repaired = sanitize(reasoning_only, api=OC, provider="llamacpp")
    assert repaired.body["messages"][1] == {"role": "assistant", "reasoning_content": "thinking", "content": ""}
    assert found(repaired.body, "llamacpp") == []
    null = chat(ou(), {"role": "assistant", "content": None}, ou("again"))
    assert [v.rule for v in validate(null, api=OC, provider="llamacpp")] == ["llamacpp.empty-assistant"]


def test_llamacpp_s_template_refusal_is_a_500_named_after_the_model_s_template() -> None:
    users = chat({"role": "system", "content": "s"}, ou("a"), ou("b"))
    gemma = validate({**users, "model": "gemma-3-27b-it"}, api=OC, provider="llamacpp")
    assert [(v.rule, v.message, v.message_index, v.status) for v in gemma] == [
        ("llamacpp.template-role-order", "Conversation roles must alternate user/assistant/user/assistant/...", 2, 500)
    ]
    assert gemma[0].body == {"error": {"code": 500, "message": gemma[0].message, "type": "server_error"}}
    devstral = validate({**users, "model": "devstral-small-2"}, api=OC, provider="llamacpp")
    assert [v.message for v in devstral] == [LC_ALTERNATE]
    # The Mistral templates leave tool results and calling turns out of the count.
    loop = chat(ou(), oa(None, "c1"), ot("c1"), oa("done"), ou("thanks"))
    assert validate({**loop, "model": "devstral-small-2"}, api=OC, provider="llamacpp") == []
    # An unknown template is not judged; llama.cpp checks no tool pairing.
    assert found({**users, "model": "my-alias"}, "llamacpp") == []
    assert found(chat(ou(), ot("c9")), "llamacpp") == []


def test_llamacpp_repairs_the_template_order_for_any_model() -> None:
    users = chat({"role": "system", "content": "s"}, ou("a"), ou("b"))
    for model in ("gemma-3-27b-it", "devstral-small-2", "my-alias"):
        result = sanitize({**users, "model": model}, api=OC, provider="llamacpp")
        assert [r.code for r in result.repairs] == ["PV005"]
        assert found(result.body, "llamacpp") == []


def test_llamacpp_s_other_error_bodies() -> None:
    assert error_envelope(OC, "llamacpp", "no key", status=401)[1] == {
        "error": {"code": 401, "message": "no key", "type": "authentication_error"}
    }
    assert error_envelope(OC, "llamacpp", "loading", status=503)[1] == {
        "error": {"code": 503, "message": "loading", "type": "unavailable_error"}
    }


FW_EXTRA = "Extra inputs are not permitted, field: 'messages[{n}].{field}', value: {value}."


def test_fireworks_forbids_a_message_key_outside_its_schema_one_error_each() -> None:
    # microsoft/vscode#335780: a client's chain-of-thought bookkeeping replayed on an assistant message.
    cot = {"role": "assistant", "content": "ok", "cot_id": "cot_1", "cot_summary": "looked"}
    body = chat(ou(), cot, ou("next"))
    assert found(body, "fireworks") == [
        ("fireworks.extra-input", FW_EXTRA.format(n=1, field="cot_id", value="'cot_1'"), 1),
        ("fireworks.extra-input", FW_EXTRA.format(n=1, field="cot_summary", value="'looked'"), 1),
    ]
    first = validate(body, api=OC, provider="fireworks")[0]
    assert first.status == 400
    assert first.body == {"error": {"object": "error", "type": "invalid_request_error", "message": first.message}}
    # Python's repr of the value, as in "value: True." (web-infra-dev/midscene#1322).
    flagged = chat({"role": "user", "content": "hi", "pinned": True})
    assert [m for _, m, _ in found(flagged, "fireworks")] == [FW_EXTRA.format(n=0, field="pinned", value="True")]


def test_fireworks_takes_reasoning_and_checks_no_pairing() -> None:
    kept = chat(ou(), thought("4", "2+2"), ou("and?"), {"role": "assistant", "content": "6", "reasoning": "3+3"})
    assert found(kept, "fireworks") == []
    assert found(chat(ou(), ot("c9")), "fireworks") == []


def test_fireworks_repair_removes_the_keys_and_keeps_them_in_the_record() -> None:
    tool = {**ot("c1"), "status": "done"}
    body = chat(ou(), {"role": "assistant", "content": "ok", "cot_id": "cot_1"}, ou("go"), oa(None, "c1"), tool)
    result = sanitize(body, api=OC, provider="fireworks")
    assert [r.code for r in result.repairs] == ["PV009", "PV009"]
    assert result.body["messages"][1] == {"role": "assistant", "content": "ok"}
    assert "status" not in result.body["messages"][4]
    assert "cot_1" in result.repairs[0].detail
    assert found(result.body, "fireworks") == []
