"""The public surface: exports, provider registry, envelopes, shape errors and speed."""

from __future__ import annotations

import json
from typing import Any

import pytest

import sanitizer.validation as validation
from sanitizer._errors import SanitizeError, UnknownAPIError, UnknownProviderError
from sanitizer.validation import PROVIDERS, Violation, error_envelope, validate
from tests._support.builders import aa, anthropic, au, ba, bedrock, btr, btu, bu, chat, oa, ot, ou, tr, tu

O2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
ORPHAN = chat(ou(), oa("hi"), ot("c9"))


def test_exports_are_pinned() -> None:
    assert sorted(validation.__all__) == ["PROVIDERS", "Violation", "error_envelope", "validate"]


def test_providers_per_api() -> None:
    assert PROVIDERS == {
        "openai-chat": (
            "openai",
            "azure",
            "mistral",
            "deepseek",
            "groq",
            "moonshot",
            "minimax",
            "openrouter",
            "vllm",
            "cerebras",
            "dashscope",
            "llamacpp",
            "fireworks",
            "xai",
            "zhipu",
            "nim",
            "lmstudio",
            "ollama",
            "sglang",
            "sambanova",
            "together",
            "anthropic-openai-compat",
            "bedrock",
            "gemini-openai-compat",
        ),
        "anthropic-messages": ("anthropic", "bedrock", "vertex", "openai", "mistral", "deepseek-anthropic-compat"),
        "openai-responses": ("openai", "azure", "vllm", "deepseek", "mistral"),
        "gemini": ("gemini", "vertex"),
        "bedrock-converse": ("bedrock",),
    }


def test_violation_is_frozen() -> None:
    v = Violation("openai.O2", 400, "m", {"error": {}}, 2)
    assert v.headers == {}
    with pytest.raises(AttributeError):
        v.rule = "x"  # type: ignore[misc]


def test_unknown_api_lists_the_known_ones() -> None:
    with pytest.raises(UnknownAPIError, match="known: openai-chat, anthropic-messages, openai-responses"):
        validate({}, api="cohere")


@pytest.mark.parametrize(("api", "provider"), [("openai-chat", "cohere"), ("anthropic-messages", "groq")])
def test_unknown_or_foreign_provider_lists_the_known_ones(api: str, provider: str) -> None:
    with pytest.raises(UnknownProviderError, match=f"known: {PROVIDERS[api][0]}"):
        validate({"messages": []}, api=api, provider=provider)
    with pytest.raises(UnknownProviderError):
        error_envelope(api, provider, "x")


# Full envelopes, one per provider family.
def test_openai_envelope() -> None:
    [v] = validate(ORPHAN, api="openai-chat")
    assert (v.rule, v.status, v.message_index, v.headers) == ("openai.O2", 400, 2, {})
    assert v.body == {
        "error": {"message": O2, "type": "invalid_request_error", "param": "messages.[2].role", "code": None}
    }


def test_openai_schema_envelope_has_code() -> None:
    [v] = validate(chat(ou(), oa("hi", tool_calls=[]), ou()), api="openai-chat")
    assert v.body["error"] == {  # type: ignore[call-overload]
        "message": "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, "
        "but got an empty array instead.",
        "type": "invalid_request_error",
        "param": "messages[1].tool_calls",
        "code": "empty_array",
    }


def test_anthropic_envelope() -> None:
    [v] = validate(anthropic(au("go"), aa(tu("a")), au("next")), api="anthropic-messages")
    assert v.body == {"type": "error", "error": {"type": "invalid_request_error", "message": v.message}}
    assert v.headers == {}


def test_anthropic_on_bedrock_invoke_model_envelope() -> None:
    [v] = validate(anthropic(au("go"), aa(tu("a")), au("next")), api="anthropic-messages", provider="bedrock")
    assert v.rule == "anthropic.A1"
    assert v.body == {"message": v.message}
    assert v.headers == {"x-amzn-ErrorType": "ValidationException"}


def test_bedrock_envelope() -> None:
    violations = validate(bedrock(bu({"text": "a"}), bu({"text": "b"})), api="bedrock-converse")
    assert [(v.body, v.headers) for v in violations] == [
        (
            {
                "message": "A conversation must alternate between user and assistant roles. Make sure the "
                "conversation alternates between user and assistant roles and try again."
            },
            {"x-amzn-ErrorType": "ValidationException"},
        )
    ]


def test_gemini_envelope() -> None:
    [v] = validate({"contents": []}, api="gemini")
    assert v.body == {"error": {"code": 400, "message": v.message, "status": "INVALID_ARGUMENT"}}


def test_gemini_openai_compat_envelope_is_an_array() -> None:
    [v] = validate(chat(ou("")), api="openai-chat", provider="gemini-openai-compat")
    assert v.body == [{"error": {"code": 400, "message": v.message, "status": "INVALID_ARGUMENT"}}]


def test_mistral_envelope() -> None:
    [v] = validate(chat(ou(), ot("abcDEF123")), api="openai-chat", provider="mistral")
    assert v.body == {
        "object": "error",
        "message": "Unexpected role 'tool' after role 'user'",
        "type": "invalid_request_message_order",
        "param": None,
        "code": "3230",
    }


def test_mistral_id_envelope() -> None:
    [v, *_] = validate(chat(ou(), oa(None, "abc123"), ot("abc123")), api="openai-chat", provider="mistral")
    assert v.body == {
        "object": "error",
        "message": "Tool call id was abc123 but must be a-z, A-Z, 0-9, with a length of 9.",
        "type": "invalid_function_call",
        "param": None,
        "code": "3280",
    }


def test_deepseek_envelope() -> None:
    [v] = validate(ORPHAN, api="openai-chat", provider="deepseek")
    assert v.body == {
        "error": {
            "message": "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }


def test_openrouter_wraps_the_upstream_body() -> None:
    [v] = validate(ORPHAN, api="openai-chat", provider="openrouter")
    assert v.message == O2
    error = v.body["error"]  # type: ignore[call-overload]
    assert (error["message"], error["code"], error["metadata"]["provider_name"]) == (
        "Provider returned error",
        400,
        "OpenAI",
    )
    assert json.loads(error["metadata"]["raw"]) == validate(ORPHAN, api="openai-chat")[0].body


def test_anthropic_openai_compat_envelope() -> None:
    [v] = validate(chat(ou(""), oa("x"), ou()), api="openai-chat", provider="anthropic-openai-compat")
    assert v.body == {
        "error": {
            "code": "invalid_request_error",
            "message": "messages.0: all messages must have non-empty content except for the optional final "
            "assistant message",
            "type": "invalid_request_error",
            "param": None,
        }
    }


def test_vllm_and_groq_envelopes() -> None:
    body = chat(ou(), ou(), model="mistral-7b-instruct")
    [v] = validate(body, api="openai-chat", provider="vllm")
    assert v.body == {"error": {"message": v.message, "type": "BadRequestError", "param": None, "code": 400}}
    [g] = validate(chat(ou(), oa(None, "c1"), ot("c1", [])), api="openai-chat", provider="groq")
    assert g.body == {"error": {"message": g.message, "type": "invalid_request_error"}}


def test_responses_envelope() -> None:
    body = {"input": [{"type": "function_call_output", "call_id": "c9", "output": "x"}]}
    [v] = validate(body, api="openai-responses")
    assert v.body == {
        "error": {
            "message": "No tool call found for function call output with call_id c9.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
    }


# error_envelope: the proxy's own errors in each provider's shape.
@pytest.mark.parametrize(
    ("api", "provider", "status", "kind", "expected_body", "expected_headers"),
    [
        (
            "anthropic-messages",
            None,
            401,
            "invalid_request_error",
            {"type": "error", "error": {"type": "authentication_error", "message": "m"}},
            {},
        ),
        (
            "anthropic-messages",
            "anthropic",
            413,
            "request_too_large",
            {"type": "error", "error": {"type": "request_too_large", "message": "m"}},
            {},
        ),
        (
            "anthropic-messages",
            None,
            529,
            "overloaded_error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "m"}},
            {},
        ),
        (
            "openai-chat",
            None,
            400,
            "invalid_request_error",
            {"error": {"message": "m", "type": "invalid_request_error", "param": None, "code": None}},
            {},
        ),
        (
            "openai-chat",
            None,
            502,
            "invalid_request_error",
            {"error": {"message": "m", "type": "server_error", "param": None, "code": None}},
            {},
        ),
        (
            "openai-responses",
            "azure",
            401,
            "authentication_error",
            {"error": {"message": "m", "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
            {},
        ),
        (
            "gemini",
            None,
            504,
            "invalid_request_error",
            {"error": {"code": 504, "message": "m", "status": "DEADLINE_EXCEEDED"}},
            {},
        ),
        (
            "openai-chat",
            "gemini-openai-compat",
            401,
            "invalid_request_error",
            [{"error": {"code": 401, "message": "m", "status": "UNAUTHENTICATED"}}],
            {},
        ),
        (
            "bedrock-converse",
            None,
            400,
            "invalid_request_error",
            {"message": "m"},
            {"x-amzn-ErrorType": "ValidationException"},
        ),
        (
            "bedrock-converse",
            None,
            429,
            "rate_limit_error",
            {"message": "m"},
            {"x-amzn-ErrorType": "ThrottlingException"},
        ),
        (
            "openai-chat",
            "mistral",
            400,
            "invalid_request_error",
            {"object": "error", "message": "m", "type": "invalid_request_error", "param": None, "code": None},
            {},
        ),
        ("openai-chat", "openrouter", 502, "api_error", {"error": {"message": "m", "code": 502}}, {}),
    ],
)
def test_error_envelope(
    api: str, provider: str | None, status: int, kind: str, expected_body: Any, expected_headers: dict[str, str]
) -> None:
    assert error_envelope(api, provider, "m", status=status, kind=kind) == (status, expected_body, expected_headers)


# Shape errors: typed, with the field's path, never a KeyError or TypeError.
@pytest.mark.parametrize(
    ("api", "body", "path"),
    [
        ("anthropic-messages", [], ""),
        ("anthropic-messages", {}, "messages"),
        ("anthropic-messages", {"messages": {"role": "user"}}, "messages"),
        ("anthropic-messages", {"messages": [au("a"), aa("b"), au("c"), "hi"]}, "messages[3]"),
        ("anthropic-messages", {"messages": [au("a"), aa(tu("t1"), 7)]}, "messages[1].content[1]"),
        ("anthropic-messages", {"messages": [{"role": "user"}]}, "messages[0].content"),
        ("anthropic-messages", {"messages": [{"role": "tool", "content": "x"}]}, "messages[0].role"),
        ("anthropic-messages", {"messages": [au(tr(None))]}, "messages[0].content[0].tool_use_id"),  # type: ignore[arg-type]
        ("openai-chat", {"messages": "hi"}, "messages"),
        (
            "openai-chat",
            {"messages": [ou(), {"role": "assistant", "tool_calls": [{"id": "c"}]}]},
            "messages[1].tool_calls[0].function",
        ),
        (
            "openai-chat",
            {"messages": [{"role": "tool", "tool_call_id": 7, "content": "x"}]},
            "messages[0].tool_call_id",
        ),
        ("openai-chat", {"messages": [{"content": "x"}]}, "messages[0].role"),
        ("openai-responses", {"input": [{"type": "function_call", "name": "ls"}]}, "input[0].call_id"),
        ("openai-responses", {"input": {"type": "message"}}, "input"),
        ("gemini", {"contents": [{"role": "user", "parts": "hi"}]}, "contents[0].parts"),
        (
            "bedrock-converse",
            {"messages": [bu({"toolResult": {"content": []}})]},
            "messages[0].content[0].toolResult.toolUseId",
        ),
        ("bedrock-converse", {"messages": [{"role": "user", "content": "hi"}]}, "messages[0].content"),
    ],
)
def test_wrong_shape_raises_sanitize_error(api: str, body: Any, path: str) -> None:
    with pytest.raises(SanitizeError) as info:
        validate(body, api=api)
    assert info.value.path == path


# Linear time: a 10,000-message transcript validates well under a second for every API.
def _long(api: str) -> Any:
    n = 2500
    if api == "anthropic-messages":
        msgs = [m for k in range(n) for m in (au("q"), aa(tu(f"t{k}")), au(tr(f"t{k}")), aa("a"))]
        return anthropic(*msgs[:-1], au("end"))
    if api == "openai-chat":
        return chat(*[m for k in range(n) for m in (ou("q"), oa(None, f"c{k}"), ot(f"c{k}"), oa("a"))])
    if api == "openai-responses":
        items = [
            {"type": "function_call", "call_id": f"c{k}", "name": "ls", "arguments": "{}", "id": f"fc_{k}"}
            if j == 0
            else {"type": "function_call_output", "call_id": f"c{k}", "output": "ok"}
            for k in range(n)
            for j in range(2)
        ]
        return {"input": items}
    if api == "gemini":
        turns = [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls"}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]},
            {"role": "model", "parts": [{"text": "a"}]},
        ]
        return {"contents": turns * n + [{"role": "user", "parts": [{"text": "end"}]}]}
    msgs = [m for k in range(n) for m in (bu({"text": "q"}), ba(btu(f"t{k}")), bu(btr(f"t{k}")), ba({"text": "a"}))]
    return bedrock(*msgs, bu({"text": "end"}))


@pytest.mark.parametrize("api", list(PROVIDERS))
def test_ten_thousand_messages_validate_for_every_provider(api: str) -> None:
    """Long transcripts complete for every provider (speed is measured in bench/, not here)."""
    body = _long(api)
    for provider in PROVIDERS[api]:
        assert isinstance(validate(body, api=api, provider=provider), list), provider


def test_ten_thousand_broken_messages_stay_linear() -> None:
    # Every call unanswered and every result orphaned: the worst case for the pairing walk.
    msgs = [m for k in range(5000) for m in (oa(None, f"c{k}"), ot(f"x{k}"))]
    violations = validate(chat(ou(), *msgs), api="openai-chat")
    assert len(violations) == 10000


def test_providers_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        PROVIDERS["cohere"] = ("cohere",)  # type: ignore[index]
