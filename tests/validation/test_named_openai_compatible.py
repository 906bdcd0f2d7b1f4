"""Cerebras's, DashScope's, llama.cpp's, Fireworks's, xAI's, Zhipu's, NVIDIA NIM's, LM Studio's, Ollama's, SGLang's,
SambaNova's and Together's own checks and texts, in their own error bodies: providers reached
through an OpenAI-compatible base URL that refuse what OpenAI takes, or word OpenAI's rules their way."""

from __future__ import annotations

from typing import Any

import pytest

from sanitizer import sanitize
from sanitizer.validation import error_envelope, validate
from tests._support.builders import chat, oa, osys, ot, ou

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


@pytest.mark.parametrize(
    "provider",
    [
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
    ],
)
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
    users = chat(osys(), ou("a"), ou("b"))
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
    users = chat(osys(), ou("a"), ou("b"))
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


XAI_EMPTY = (
    "The arguments to a tool_call with ID '{id}' are not a valid JSON string. "
    'Parsing error: Error("EOF while parsing a value", line: 1, column: 0)'
)


def seeded_call(ident: str, arguments: str) -> dict[str, Any]:
    function = {"name": "list_datasets", "arguments": arguments}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": ident, "type": "function", "function": function}],
    }


def test_xai_refuses_a_replayed_call_with_empty_arguments_in_its_own_body() -> None:
    # spiceai/spiceai#4734: an agent's seeded call with no arguments, refused on every request.
    body = chat(ou(), seeded_call("initial_list_datasets", ""), ot("initial_list_datasets"), ou("next"))
    [violation] = validate(body, api=OC, provider="xai")
    text = XAI_EMPTY.format(id="initial_list_datasets")
    assert (violation.rule, violation.message, violation.message_index, violation.status) == (
        "xai.arguments-not-json",
        text,
        1,
        400,
    )
    assert violation.body == {"code": "Client specified an invalid argument", "error": text}
    # UKGovernmentBEIS/inspect_ai PR#2267: a 403's code.
    assert error_envelope(OC, "xai", "Content violates usage guidelines.", status=403)[1] == {
        "code": "The caller does not have permission to execute the specified operation",
        "error": "Content violates usage guidelines.",
    }


def test_xai_checks_no_pairing_and_takes_json_of_any_kind() -> None:
    assert found(chat(ou(), ot("c9")), "xai") == []
    assert found(chat(ou(), seeded_call("c1", "{}"), ot("c1"), ou("next")), "xai") == []


def test_xai_repair_turns_arguments_it_cannot_parse_into_an_empty_object() -> None:
    encoded = '"{\\"q\\": 1}"'  # valid JSON (a string), which xAI takes: left as it is
    body = chat(
        ou(),
        seeded_call("c1", ""),
        ot("c1"),
        seeded_call("c2", '{"q": '),
        ot("c2"),
        seeded_call("c3", encoded),
        ot("c3"),
        ou(),
    )
    result = sanitize(body, api=OC, provider="xai")
    assert [(r.code, r.tool_call_id) for r in result.repairs] == [("PV010", "c1"), ("PV010", "c2")]
    arguments = [m["tool_calls"][0]["function"]["arguments"] for m in result.body["messages"] if m.get("tool_calls")]
    assert arguments == ["{}", "{}", encoded]
    assert found(result.body, "xai") == []
    # Bound for OpenAI, which takes arguments as text, nothing changes.
    assert sanitize(body, api=OC, provider="openai").repairs == []


ZHIPU = "The messages parameter is illegal. Please check the documentation."


@pytest.mark.parametrize(
    ("body", "index"),
    [
        # MetaGLM/zhipuai-sdk-python-v4#14: a system prompt, then calls and results.
        pytest.param(chat(osys(), oa(None, "c1"), ot("c1")), 1, id="calls-only"),
        # HKUDS/nanobot PR#3086: a system message alone.
        pytest.param(chat(osys()), 0, id="system-alone"),
        pytest.param(chat(oa("I will start.")), 0, id="assistant-alone"),
    ],
)
def test_zhipu_refuses_a_conversation_with_no_user_message_with_code_1214(body: dict[str, Any], index: int) -> None:
    [violation] = validate(body, api=OC, provider="zhipu")
    assert (violation.rule, violation.message, violation.message_index) == ("zhipu.1214-no-user-message", ZHIPU, index)
    assert violation.body == {"error": {"code": "1214", "message": ZHIPU}}
    repaired = sanitize(body, api=OC, provider="zhipu")
    assert [r.code for r in repaired.repairs] in (["BR003"], ["AN007"])
    assert found(repaired.body, "zhipu") == []


def test_zhipu_asks_for_a_user_message_anywhere_and_checks_nothing_else() -> None:
    trimmed = chat(osys(), oa("plan"), ou("go on"))
    assert found(trimmed, "zhipu") == []
    assert sanitize(trimmed, api=OC, provider="zhipu").repairs == []
    # No pairing checks (Zhipu's texts unknown), and an empty list is not judged (its answer unknown).
    assert found(chat(ou(), ot("c9")), "zhipu") == []
    assert found(chat(), "zhipu") == []
    # OpenAI takes a system message alone: the repair is Zhipu's.
    assert sanitize(chat(osys()), api=OC, provider="openai").repairs == []


NIM = "request: Value error, Empty content is not allowed for assistant messages"


def test_nim_refuses_an_empty_string_beside_tool_calls_in_vllm_s_body() -> None:
    # CherryHQ/cherry-studio#16155: a client that stores a tool-calling turn's text as "".
    body = chat(ou(), oa("", "c1"), ot("c1"), ou("next"))
    [violation] = validate(body, api=OC, provider="nim")
    assert (violation.rule, violation.message, violation.message_index, violation.status) == (
        "nim.empty-assistant-content",
        NIM,
        1,
        400,
    )
    assert violation.body == {"error": {"message": NIM, "type": "BadRequestError", "param": None, "code": 400}}


def test_nim_takes_null_beside_tool_calls_and_checks_no_pairing() -> None:
    # ogx-ai/ogx#1751: "NVIDIA NIM allow content=null, but not content=\"\"".
    assert found(chat(ou(), oa(None, "c1"), ot("c1"), ou("next")), "nim") == []
    assert found(chat(ou(), ot("c9")), "nim") == []
    # An empty answer with no calls: no public report shows NIM's answer, so it is not judged.
    assert found(chat(ou(), oa(""), ou("next")), "nim") == []


def test_nim_repair_makes_the_empty_text_null_and_leaves_openai_alone() -> None:
    body = chat(ou(), oa("", "c1"), ot("c1"), oa("", "c2"), ot("c2"), ou("next"))
    result = sanitize(body, api=OC, provider="nim")
    assert [(r.code, r.message_index) for r in result.repairs] == [("GM005", 1), ("GM005", 3)]
    assert [m["content"] for m in result.body["messages"] if m.get("tool_calls")] == [None, None]
    assert found(result.body, "nim") == []
    assert sanitize(body, api=OC, provider="openai").repairs == []


LMSTUDIO = (
    'Error rendering prompt with jinja template: "No user query found in messages.".\n\n'
    "This is usually an issue with the model's prompt template. If you are using a popular model, you can try "
    "to search the model under lmstudio-community, which will have fixed prompt templates. If you cannot find "
    "one, you are welcome to post this issue to our discord or issue tracker on GitHub. Alternatively, if you "
    "know how to write jinja templates, you can override the prompt template in My Models > model settings > "
    "Prompt Template."
)


@pytest.mark.parametrize("model", ["qwen/qwen3.5-35b-a3b", "qwen3.5-9b", "Qwen3.6-27B", "qwen3_6-35b-a3b"])
def test_lmstudio_s_qwen_templates_refuse_a_conversation_with_no_user_message(model: str) -> None:
    body = {**chat(osys(), oa(None, "c1"), ot("c1")), "model": model}
    [violation] = validate(body, api=OC, provider="lmstudio")
    assert (violation.rule, violation.message, violation.message_index) == ("lmstudio.no-user-query", LMSTUDIO, 1)
    assert violation.body == {"error": LMSTUDIO}
    repaired = sanitize(body, api=OC, provider="lmstudio")
    assert [r.code for r in repaired.repairs] == ["BR003"]
    assert repaired.body["messages"][1]["role"] == "user"
    assert validate(repaired.body, api=OC, provider="lmstudio") == []


def test_lmstudio_judges_only_the_templates_it_knows_and_repairs_for_any_model() -> None:
    no_user = chat(osys(), oa("I will start."))
    # Qwen3's own template, and other models' templates, are not known to refuse it.
    for model in ("qwen3-8b", "qwen2.5-coder-32b-instruct", "gemma-3-27b-it", "qwen3.50-x"):
        assert validate({**no_user, "model": model}, api=OC, provider="lmstudio") == []
    assert [r.code for r in sanitize({**no_user, "model": "gemma-3-27b-it"}, api=OC, provider="lmstudio").repairs] == [
        "BR003"
    ]
    # A system prompt alone gets a user message from AN007; one anywhere is enough.
    alone = {**chat(osys()), "model": "qwen3.5-9b"}
    assert [r.code for r in sanitize(alone, api=OC, provider="lmstudio").repairs] == ["AN007"]
    trimmed = {**chat(osys(), oa("plan"), ou("go on")), "model": "qwen3.5-9b"}
    assert validate(trimmed, api=OC, provider="lmstudio") == []
    assert sanitize(trimmed, api=OC, provider="lmstudio").repairs == []


RS = "openai-responses"
VLLM_CALL = {"type": "function_call", "call_id": "call_1", "name": "get_cve", "arguments": "{}"}
VLLM_OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "{}"}


def vllm_responses(*items: dict[str, Any], model: str = "openai/gpt-oss-120b", **extra: Any) -> dict[str, Any]:
    return {"model": model, "input": [{"role": "user", "content": "Describe CVE-2024-1015."}, *items], **extra}


@pytest.mark.parametrize("items", [(VLLM_OUTPUT,), (VLLM_OUTPUT, VLLM_CALL)])
def test_vllm_s_harmony_path_refuses_an_output_whose_call_is_not_before_it(items: tuple[dict[str, Any], ...]) -> None:
    [v] = validate(vllm_responses(*items), api=RS, provider="vllm")
    assert (v.rule, v.message, v.message_index, v.status) == (
        "vllm.VR1",
        "No call message found for call_1 None",
        1,
        400,
    )
    assert v.body == {
        "error": {
            "message": "No call message found for call_1 None",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    }


@pytest.mark.parametrize(
    "body",
    [
        vllm_responses(VLLM_CALL, VLLM_OUTPUT),
        # Other models go through the chat template, whose refusal of an orphan output is not known.
        vllm_responses(VLLM_OUTPUT, model="Qwen/Qwen3-8B"),
        # The call may be in the stored response.
        vllm_responses(VLLM_OUTPUT, previous_response_id="resp_1"),
        # None of OpenAI's own checks: a reasoning item without summary or id, an id without its prefix.
        vllm_responses({"type": "reasoning", "content": []}, {**VLLM_CALL, "id": "x1"}, VLLM_OUTPUT),
    ],
)
def test_vllm_s_responses_endpoint_takes_what_openai_would_refuse(body: dict[str, Any]) -> None:
    assert validate(body, api=RS, provider="vllm") == []


@pytest.mark.parametrize(("items", "rule"), [((VLLM_OUTPUT,), "TP004"), ((VLLM_OUTPUT, VLLM_CALL), "TP003")])
def test_vllm_s_responses_repair_folds_an_orphan_output_or_moves_it_after_its_call(
    items: tuple[dict[str, Any], ...], rule: str
) -> None:
    result = sanitize(vllm_responses(*items), api=RS, provider="vllm")
    assert [r.code for r in result.repairs] == [rule]
    assert validate(result.body, api=RS, provider="vllm") == []


OLLAMA_BODY = {"error": {"message": "{text}", "type": "invalid_request_error", "param": None, "code": None}}


def ollama_body(text: str) -> dict[str, Any]:
    return {"error": {**OLLAMA_BODY["error"], "message": text}}


@pytest.mark.parametrize(
    ("message", "rule", "text"),
    [
        # QwenLM/qwen-code#3350: content null, and no tool_calls key to stand in for it.
        (oa(None), "ollama.content-type-nil", "invalid message content type: <nil>"),
        (
            {"role": "assistant", "reasoning_content": "hm"},
            "ollama.content-type-nil",
            "invalid message content type: <nil>",
        ),
        (oa(None, tool_calls=None), "ollama.content-type-nil", "invalid message content type: <nil>"),
        # tombii/better-ccflare#141: a part of a type its OpenAI layer does not convert.
        (oa([{"type": "refusal", "refusal": "no"}]), "ollama.invalid-message-format", "invalid message format"),
        (ou([{"type": "input_text", "text": "hi"}]), "ollama.invalid-message-format", "invalid message format"),
        (ou([{"type": "text", "text": None}]), "ollama.invalid-message-format", "invalid message format"),
    ],
)
def test_ollama_refuses_what_its_openai_layer_cannot_convert(message: dict[str, Any], rule: str, text: str) -> None:
    body = chat(ou(), message, ou("next"))
    [violation] = validate(body, api=OC, provider="ollama")
    assert (violation.rule, violation.message, violation.message_index, violation.status) == (rule, text, 1, 400)
    assert violation.body == ollama_body(text)
    repaired = sanitize(body, api=OC, provider="ollama")
    assert validate(repaired.body, api=OC, provider="ollama") == []


@pytest.mark.parametrize("arguments", ["", "not json", "[1]", '"{}"'])
def test_ollama_refuses_arguments_that_are_not_an_object_and_pv010_repairs_them(arguments: str) -> None:
    body = chat(ou(), {**oa(None, "c1")}, ot("c1"), ou("next"))
    body["messages"][1]["tool_calls"][0]["function"]["arguments"] = arguments
    assert found(body, "ollama") == [("ollama.invalid-tool-call-arguments", "invalid tool call arguments", 1)]
    repaired = sanitize(body, api=OC, provider="ollama")
    assert [r.code for r in repaired.repairs] == ["PV010"]
    assert found(repaired.body, "ollama") == []


def test_ollama_takes_what_openai_takes_and_only_the_first_refusal_is_answered() -> None:
    ok = chat(ou([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]), oa(None, "c1"))
    ok["messages"].append(ot("c1"))
    ok["messages"][1]["tool_calls"][0]["function"]["arguments"] = "null"  # Go unmarshals it into a nil map
    assert found(ok, "ollama") == []
    assert found(chat(ou(), oa(None, tool_calls=[])), "ollama") == []  # an empty list is not nil in Go
    assert found(chat(ou(), ot("c9")), "ollama") == []  # no pairing checks
    two = chat(ou(), oa(None), ou([{"type": "file", "file": {"file_id": "f"}}]))
    assert found(two, "ollama") == [("ollama.content-type-nil", "invalid message content type: <nil>", 1)]


SGLANG_TOOL_ROLE = "Message has tool role, but there was no previous assistant message with a tool call!"


def sglang_body(text: str) -> dict[str, Any]:
    return {"object": "error", "message": text, "type": "BadRequest", "param": None, "code": 400}


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ("", "Assistant tool call function.arguments must be valid JSON."),
        ('{"q": ', "Assistant tool call function.arguments must be valid JSON."),
        ('"{\\"q\\": 1}"', "Assistant tool call function.arguments must be a JSON object."),
        ("[1]", "Assistant tool call function.arguments must be a JSON object."),
    ],
)
def test_sglang_parses_replayed_arguments_into_an_object(arguments: str, text: str) -> None:
    body = chat(ou(), oa(None, "c1"), ot("c1"), ou("next"), model="Qwen/Qwen3-8B")
    body["messages"][1]["tool_calls"][0]["function"]["arguments"] = arguments
    [violation] = validate(body, api=OC, provider="sglang")
    assert (violation.rule, violation.message, violation.message_index) == ("sglang.arguments-not-object", text, 1)
    assert violation.body == sglang_body(text)
    repaired = sanitize(body, api=OC, provider="sglang")
    assert [r.code for r in repaired.repairs] == ["PV010"]
    assert validate(repaired.body, api=OC, provider="sglang") == []


@pytest.mark.parametrize(
    ("messages", "index", "rule"),
    [
        # A history trimmed between a call and its result (sgl-project/sglang PR#14748's text).
        ((ou(), ot("c1"), ou("next")), 1, "TP004"),
        # The result before its call: the template has no call yet.
        ((ou(), ot("c1"), oa(None, "c1"), ou("next")), 1, "TP003"),
    ],
)
def test_sglang_s_gpt_oss_template_refuses_a_tool_message_after_no_call(
    messages: tuple[dict[str, Any], ...], index: int, rule: str
) -> None:
    body = chat(*messages, model="openai/gpt-oss-120b")
    [violation] = validate(body, api=OC, provider="sglang")
    assert (violation.rule, violation.message, violation.message_index) == (
        "sglang.tool-role-without-call",
        SGLANG_TOOL_ROLE,
        index,
    )
    assert violation.body == sglang_body(SGLANG_TOOL_ROLE)
    repaired = sanitize(body, api=OC, provider="sglang")
    assert rule in [r.code for r in repaired.repairs]
    assert validate(repaired.body, api=OC, provider="sglang") == []


def test_sglang_judges_the_template_only_for_the_models_known_to_raise_it() -> None:
    orphan = chat(ou(), ot("c1"), ou("next"))
    assert found({**orphan, "model": "MiniMaxAI/MiniMax-M2"}, "sglang")[0][0] == "sglang.tool-role-without-call"
    assert found({**orphan, "model": "Qwen/Qwen3-8B"}, "sglang") == []
    paired = chat(ou(), oa(None, "c1"), ot("c1"), ou("next"), model="openai/gpt-oss-20b")
    assert found(paired, "sglang") == []
    # Tool messages with text parts: SGLang flattens them itself.
    parts = chat(ou(), oa(None, "c1"), ot("c1", [{"type": "text", "text": "ok"}]), model="openai/gpt-oss-20b")
    assert found(parts, "sglang") == []


SAMBANOVA = (
    "Unable to tokenize message with status code 400 for model {model}: "
    "Invalid 'content' type. Expected one of: ['str'], got list."
)


@pytest.mark.parametrize("model", ["DeepSeek-V3.1", "Meta-Llama-3.3-70B-Instruct"])
def test_sambanova_refuses_text_parts_naming_the_request_s_model(model: str) -> None:
    # musistudio/claude-code-router#965: Claude Code's blocks as Chat text parts.
    body = chat(osys([{"type": "text", "text": "Be brief."}]), ou([{"type": "text", "text": "hi"}]), model=model)
    [violation] = validate(body, api=OC, provider="sambanova")
    text = SAMBANOVA.format(model=model)
    assert (violation.rule, violation.message, violation.message_index) == ("sambanova.content-not-string", text, 0)
    assert violation.body == {"error": {"message": text, "type": "invalid_request_error", "param": None, "code": None}}
    repaired = sanitize(body, api=OC, provider="sambanova")
    assert [m["content"] for m in repaired.body["messages"]] == ["Be brief.", "hi"]
    assert validate(repaired.body, api=OC, provider="sambanova") == []


def test_sambanova_leaves_an_image_for_its_vision_models() -> None:
    image = ou([{"type": "text", "text": "what is it?"}, {"type": "image_url", "image_url": {"url": "x"}}])
    body = chat(image, model="Llama-4-Maverick-17B-128E-Instruct")
    assert found(body, "sambanova") == []
    assert sanitize(body, api=OC, provider="sambanova").repairs == []


def test_together_checks_nothing_and_answers_in_its_own_body() -> None:
    named = chat(ou(), oa(None, "c1"), ot("c1", name="ls"), ou("next"))
    assert found(named, "together") == []
    assert sanitize(named, api=OC, provider="together").repairs == []
    # mozilla-ai/any-llm#714: no wrapper, and the key ``type_``.
    assert error_envelope(OC, "together", "Input validation error")[1] == {
        "message": "Input validation error",
        "type_": "invalid_request_error",
    }
