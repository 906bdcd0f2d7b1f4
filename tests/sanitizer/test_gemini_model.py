"""Repairs that depend on the model: Gemini 3's thought signatures, for native and Chat bodies,
Gemini 1's reading of turns by position, and the files in function responses only Gemini 3 takes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sanitizer import Policy, PolicyError, sanitize, validate
from sanitizer.validation._gemini import response_parts_refused, signature_required, turns_by_position

DUMMY = "skip_thought_signature_validator"


def native(*, signed: bool = False) -> dict[str, Any]:
    call: dict[str, Any] = {"functionCall": {"name": "ls", "args": {}}}
    if signed:
        call["thoughtSignature"] = "c2ln"
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "list files"}]},
            {"role": "model", "parts": [call]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.txt"}}}]},
        ]
    }


def chat(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "a.txt"},
        ],
    }


@pytest.mark.parametrize(
    ("model", "required"),
    [
        ("gemini-3-pro-preview", True),
        ("gemini-3-flash-preview", True),
        ("gemini-3.1-pro-preview", True),
        ("models/gemini-3-pro-preview", True),
        ("google/gemini-3-pro-preview", True),
        ("gemini-4", True),
        ("gemini-3-pro-image-preview", False),
        ("gemini-2.5-pro", False),
        ("gemini-2.0-flash", False),
        ("gemini-flash-latest", False),
        ("gpt-4.1", False),
        (None, False),
    ],
)
def test_models_that_require_signatures(model: str | None, required: bool) -> None:
    assert signature_required(model) is required


@pytest.mark.parametrize(
    ("model", "by_position"),
    [
        ("gemini-1.5-flash", True),
        ("gemini-1.5-pro-002", True),
        ("models/gemini-1.0-pro", True),
        ("gemini-2.0-flash", False),
        ("gemini-2.5-pro", False),
        ("gemini-3-pro-preview", False),
        ("gemini-pro", False),
        (None, False),
    ],
)
def test_models_that_read_turns_by_position(model: str | None, by_position: bool) -> None:
    assert turns_by_position(model) is by_position


@pytest.mark.parametrize(
    ("model", "refused"),
    [
        ("gemini-2.5-flash", True),
        ("gemini-2.0-flash", True),
        ("gemini-1.5-pro", True),
        ("gemini-2.5-computer-use-preview-10-2025", False),
        ("gemini-3-pro-preview", False),
        ("gemini-flash-latest", False),
        (None, False),
    ],
)
def test_models_that_refuse_files_in_function_responses(model: str | None, refused: bool) -> None:
    assert response_parts_refused(model) is refused


def test_a_clean_native_body_for_gemini_1_gets_its_first_call_in_step() -> None:
    body = native()
    body["contents"].insert(0, {"role": "user", "parts": [{"text": "hi"}]})
    # Valid by role: only the model says the call at index 2 is out of step.
    assert sanitize(body, api="gemini", model="gemini-2.5-flash").body is body
    result = sanitize(body, api="gemini", model="gemini-1.5-flash")
    assert [r.code for r in result.repairs] == ["GM008"]
    assert result.body["contents"][0]["parts"] == [{"text": "hi"}, {"text": "list files"}]
    assert validate(result.body, api="gemini", model="gemini-1.5-flash") == []


def test_a_clean_native_body_for_gemini_3_gets_signatures() -> None:
    body = native()
    pristine = copy.deepcopy(body)
    result = sanitize(body, api="gemini", model="gemini-3-pro-preview")
    assert body == pristine
    assert [r.code for r in result.repairs] == ["GM003"]
    assert result.body["contents"][1]["parts"][0]["thoughtSignature"] == DUMMY
    assert validate(result.body, api="gemini", model="gemini-3-pro-preview") == []


@pytest.mark.parametrize("model", [None, "gemini-2.5-flash"])
def test_a_native_body_for_another_model_keeps_the_fast_path(model: str | None) -> None:
    body = native()
    assert sanitize(body, api="gemini", model=model).body is body


def test_signed_calls_keep_the_fast_path() -> None:
    body = native(signed=True)
    assert sanitize(body, api="gemini", model="gemini-3-pro-preview").body is body


def test_policy_leave_forwards_unsigned_calls() -> None:
    body = native()
    policy = Policy(missing_thought_signature="leave")
    assert sanitize(body, api="gemini", model="gemini-3-pro-preview", policy=policy).body is body


def test_unknown_policy_value_is_refused() -> None:
    with pytest.raises(PolicyError, match="missing_thought_signature"):
        Policy.from_mapping({"missing_thought_signature": "strip"})


def test_a_chat_body_names_its_own_model() -> None:
    repaired = sanitize(chat("gemini-3-pro-preview"), api="openai-chat", provider="gemini")
    assert [r.code for r in repaired.repairs] == ["GM003"]
    [call] = repaired.body["messages"][1]["tool_calls"]
    assert call["extra_content"] == {"google": {"thought_signature": DUMMY}}
    assert validate(repaired.body, api="openai-chat", provider="gemini-openai-compat") == []
    assert sanitize(chat("gemini-2.5-flash"), api="openai-chat", provider="gemini").repairs == []


def test_a_chat_body_for_openai_is_not_signed() -> None:
    body = chat("gemini-3-pro-preview")
    assert sanitize(body, api="openai-chat").body is body
