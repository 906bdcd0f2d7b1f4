"""OpenAI Responses' own defects, and orphan tool results in every format, through real servers.

Each broken body goes first straight to the strict emulator with the official SDK, which answers
the provider's own error text; then through Suture in front of the same emulator, which repairs
it (rules RS001-RS011, OA007, TP004's fold) and gets a 200. What reached the emulator is read back from
its record, so the test sees the repaired body itself.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import boto3
import openai
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

OPENAI_KEY = "sk-openai-test"
ANTHROPIC_KEY = "sk-ant-test"
GOOGLE_KEY = "AIza-test"
CLIENT_KEY = "suture-client-key"
BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
GEMINI_MODEL = "gemini-2.5-flash"
NEXT = "And what should I wear?"
REPLY = f'Emulated reply. Last user text: "{NEXT}"'
OUTPUT = "Sunny, 21 degrees"


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def forwarded(self) -> dict[str, Any]:
        """The body of the last request that reached the emulator."""
        lines = self.record.read_text(encoding="utf-8").splitlines()
        entries = [e for e in map(json.loads, lines) if "event" not in e]
        body: dict[str, Any] = entries[-1]["body"]
        return body

    def openai(self, *, direct: bool) -> openai.OpenAI:
        base = self.emulator if direct else self.suture
        return openai.OpenAI(base_url=base + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=10)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    record = tmp_path_factory.mktemp("responses") / "emulator.jsonl"
    with contextlib.ExitStack() as ctx:
        env = ctx.enter_context(pytest.MonkeyPatch.context())
        # Suture signs Bedrock requests with credentials from the environment, never ~/.aws.
        for name in (
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_BEARER_TOKEN_BEDROCK",
            "AWS_DEFAULT_REGION",
            "AWS_REGION",
        ):
            env.delenv(name, raising=False)
        env.setenv("AWS_CONFIG_FILE", str(record.parent / "no-aws-config"))
        env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(record.parent / "no-aws-credentials"))
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        env.setenv("AWS_ACCESS_KEY_ID", "AKIDSUTURE0000000000")
        env.setenv("AWS_SECRET_ACCESS_KEY", "suture-aws-secret")
        app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
        emu = ctx.enter_context(running_server(app, timeout_graceful_shutdown=1))
        url = ctx.enter_context(
            suture(
                # No retry after a refusal: each repair here must be made before the request is sent.
                openai={"upstream": emu + "/v1", "rejection_repair": {"enabled": False}},
                anthropic={"upstream": emu, "rejection_repair": {"enabled": False}},
                gemini={"upstream": emu, "rejection_repair": {"enabled": False}},
                bedrock={
                    "upstream": emu,
                    "enabled": True,
                    "client_api_key": CLIENT_KEY,
                    "rejection_repair": {"enabled": False},
                },
            )
        )
        yield Stack(emu, record, url)


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


def reasoning(ident: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": ident,
        "summary": [{"type": "summary_text", "text": "Thinking it over."}],
        **extra,
    }


def call(call_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
        **extra,
    }


def output(call_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": OUTPUT, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}], **extra}


@dataclass(frozen=True)
class Broken:
    name: str
    body: dict[str, Any]
    error: str
    status: int = 400


R5 = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)

CASES = [
    Broken(
        "RS001-reasoning-before-user",
        {"model": "gpt-5", "input": [user("weather?"), reasoning("rs_1"), user(NEXT)]},
        "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
    ),
    Broken(
        "RS001-stored-reasoning-before-message-without-id",
        {"model": "gpt-5", "input": [user("weather?"), reasoning("rs_1"), assistant("Sunny."), user(NEXT)]},
        "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
    ),
    Broken(
        "RS002-call-id-as-output-id",
        {"model": "gpt-4.1", "input": [user("weather?"), call("call_1"), output("call_1", id="call_1"), user(NEXT)]},
        "No tool output found for function call call_1.",
    ),
    Broken(
        "RS003-fc-id-without-reasoning",
        {"model": "gpt-5", "input": [user("weather?"), call("call_1", id="fc_1"), output("call_1"), user(NEXT)]},
        "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'.",
    ),
    Broken(
        "RS003-msg-id-without-reasoning",
        {"model": "gpt-5", "input": [user("weather?"), assistant("Sunny.", id="msg_1"), user(NEXT)]},
        "Item 'msg_1' of type 'message' was provided without its required 'reasoning' item: 'rs_…'.",
    ),
    Broken(
        "RS004-store-false-reasoning",
        {
            "model": "gpt-5",
            "store": False,
            "input": [user("weather?"), reasoning("rs_1"), call("call_1", id="fc_1"), output("call_1"), user(NEXT)],
        },
        R5.format(id="rs_1"),
        status=404,
    ),
    Broken(
        "RS004-store-false-item-reference",
        {
            "model": "gpt-4.1",
            "store": False,
            "input": [user("weather?"), {"type": "item_reference", "id": "msg_1"}, user(NEXT)],
        },
        R5.format(id="msg_1"),
        status=404,
    ),
    Broken(
        "RS005-history-replayed-twice",
        {
            "model": "gpt-4.1",
            "input": [
                user("weather?"),
                call("call_1", id="fc_1"),
                output("call_1"),
                call("call_1", id="fc_1"),
                output("call_1"),
                user(NEXT),
            ],
        },
        "Duplicate item found with id fc_1. Remove duplicate items from your input and try again.",
    ),
    Broken(
        "RS005-different-items-one-id",
        {
            "model": "gpt-4.1",
            "input": [
                user("weather?"),
                call("call_1", id="fc_1"),
                output("call_1"),
                call("call_2", id="fc_1", arguments='{"city":"Rome"}'),
                output("call_2"),
                user(NEXT),
            ],
        },
        "Duplicate item found with id fc_1. Remove duplicate items from your input and try again.",
    ),
    Broken(
        "RS006-encrypted-reasoning-with-empty-id",
        {
            "model": "gpt-5",
            "store": False,
            "input": [
                user("weather?"),
                reasoning("", encrypted_content="gAAAAB-opaque"),
                call("call_1"),
                output("call_1"),
                user(NEXT),
            ],
        },
        "Invalid 'input[1].id': ''. Expected an ID that contains letters, numbers, underscores, or dashes, "
        "but this value contained additional characters.",
    ),
    Broken(
        "RS007-reasoning-without-summary",
        {
            "model": "gpt-5",
            "input": [
                user("weather?"),
                {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB-opaque"},
                call("call_1", id="fc_1"),
                output("call_1"),
                user(NEXT),
            ],
        },
        "Missing required parameter: 'input[1].summary'.",
    ),
    Broken(
        # continuedev/continue#11994: the answer rebuilt after the calls of its own response.
        "RS009-answer-after-its-calls",
        {
            "model": "o3-mini",
            "input": [
                user("weather?"),
                reasoning("rs_1"),
                call("call_1", id="fc_1"),
                assistant("Let me look.", id="msg_1"),
                output("call_1"),
                user(NEXT),
            ],
        },
        "Item 'msg_1' of type 'message' was provided without its required 'reasoning' item: 'rs_1'.",
    ),
    Broken(
        # Wei-Shaw/sub2api#3818: a relay stringified a hosted tool search call's arguments.
        "RS011-tool-search-arguments-not-object",
        {
            "model": "gpt-5.4",
            "input": [
                user("weather?"),
                {
                    "type": "tool_search_call",
                    "id": "tsc_1",
                    "execution": "server",
                    "status": "completed",
                    "arguments": '{"query":"weather forecast"}',
                },
                {
                    "type": "tool_search_output",
                    "id": "tso_1",
                    "execution": "server",
                    "status": "completed",
                    "tools": [],
                },
                user(NEXT),
            ],
        },
        "Invalid type for 'input[1].arguments': expected an object, but got a string instead.",
    ),
    Broken(
        # Wei-Shaw/sub2api#3818 (a comment): a relay lost a call's name.
        "OA007-unnamed-tool-call",
        {"model": "gpt-4.1", "input": [user("weather?"), call("call_1", name=""), output("call_1"), user(NEXT)]},
        "Invalid 'input[1].name': empty string. Expected a string with minimum length 1, but got an empty string instead.",
    ),
    Broken(
        "TP004-orphan-output-folded",
        {"model": "gpt-4.1", "input": [user("weather?"), output("call_gone"), user(NEXT)]},
        "No tool call found for function call output with call_id call_gone.",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_rejected_directly_and_repaired_through_suture(stack: Stack, case: Broken, stream: bool) -> None:
    with stack.openai(direct=True) as direct, pytest.raises(openai.APIStatusError) as info:
        direct.responses.create(**case.body)
    assert info.value.status_code == case.status
    assert isinstance(info.value.body, dict) and info.value.body["message"] == case.error

    with stack.openai(direct=False) as client:
        if stream:
            with client.responses.stream(**case.body) as events:
                assert events.get_final_response().output_text == REPLY
        else:
            raw = client.responses.with_raw_response.create(**case.body)
            assert int(raw.headers["x-suture-repairs"]) >= 1
            assert raw.parse().output_text == REPLY
    forwarded = stack.forwarded()["input"]
    # Nothing a user typed or a tool returned is lost on the way.
    text = json.dumps(forwarded, ensure_ascii=False)
    assert "weather?" in text and NEXT in text
    if any(i.get("type") == "function_call_output" for i in case.body["input"]):
        assert OUTPUT in text


def test_a_tool_search_call_goes_on_with_its_arguments_as_an_object(stack: Stack) -> None:
    (case,) = [c for c in CASES if c.name == "RS011-tool-search-arguments-not-object"]
    with stack.openai(direct=False) as client:
        raw = client.responses.with_raw_response.create(**case.body)
        assert raw.headers["x-suture-repairs"] == "1"
    forwarded = stack.forwarded()["input"]
    assert forwarded[1] == {**case.body["input"][1], "arguments": {"query": "weather forecast"}}
    assert forwarded[2:] == case.body["input"][2:]


def test_an_answer_goes_back_before_the_calls_of_its_response(stack: Stack) -> None:
    (case,) = [c for c in CASES if c.name == "RS009-answer-after-its-calls"]
    body = case.body
    with stack.openai(direct=False) as client:
        client.responses.create(**body)
    assert stack.forwarded()["input"] == [
        user("weather?"),
        reasoning("rs_1"),
        assistant("Let me look.", id="msg_1"),
        call("call_1", id="fc_1"),
        output("call_1"),
        user(NEXT),
    ]


def test_the_repaired_items_are_the_ones_expected(stack: Stack) -> None:
    """What each repair did to the items, on one body that needs four of them."""
    body = {
        "model": "gpt-5",
        "input": [
            user("weather?"),
            call("call_1", id="fc_1"),
            output("call_1", id="call_1"),
            reasoning("rs_9"),
            output("call_gone"),
            user(NEXT),
        ],
    }
    with stack.openai(direct=False) as client:
        raw = client.responses.with_raw_response.create(**body)
    assert raw.headers["x-suture-repairs"] == "4"
    assert stack.forwarded()["input"] == [
        user("weather?"),
        call("call_1"),
        output("call_1"),
        user(f"Result of tool call call_gone returned earlier: {OUTPUT}"),
        user(NEXT),
    ]


def test_a_reasoning_item_keeps_its_encrypted_content_when_its_shape_is_repaired(stack: Stack) -> None:
    """RS006 takes the blank id off, RS007 gives back the summary; what the model reasoned stays."""
    body = {
        "model": "gpt-5",
        "store": False,
        "input": [
            user("weather?"),
            {"type": "reasoning", "id": "", "encrypted_content": "gAAAAB-opaque"},
            call("call_1"),
            output("call_1"),
            user(NEXT),
        ],
    }
    with stack.openai(direct=False) as client:
        raw = client.responses.with_raw_response.create(**body)
    assert raw.headers["x-suture-repairs"] == "2"
    assert stack.forwarded()["input"][1] == {"type": "reasoning", "encrypted_content": "gAAAAB-opaque", "summary": []}


# --- Orphan tool results, every format: folded into the user turn ------------------------------


def test_chat_orphan_tool_message_is_folded(stack: Stack) -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": ""},
            {"role": "tool", "tool_call_id": "call_gone", "name": "web-search", "content": OUTPUT},
            {"role": "user", "content": NEXT},
        ],
    }
    with stack.openai(direct=True) as direct, pytest.raises(openai.BadRequestError) as info:
        direct.chat.completions.create(**body)
    assert info.value.body == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        "type": "invalid_request_error",
        "param": "messages.[2].role",
        "code": None,
    }
    with stack.openai(direct=False) as client:
        assert client.chat.completions.create(**body).choices[0].message.content == REPLY
    assert stack.forwarded()["messages"][2] == {
        "role": "user",
        "content": f"Result of tool `web-search` (call call_gone) returned earlier: {OUTPUT}",
    }


def test_anthropic_orphan_tool_result_is_folded_after_the_results(stack: Stack) -> None:
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}],
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_gone", "content": OUTPUT},
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rainy"},
                    {"type": "text", "text": NEXT},
                ],
            },
        ],
    }
    direct = anthropic.Anthropic(base_url=stack.emulator, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10)
    with direct, pytest.raises(anthropic.BadRequestError) as info:
        direct.messages.create(**body)
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_gone" in str(info.value)
    with anthropic.Anthropic(base_url=stack.suture, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10) as client:
        reply = client.messages.create(**body)
    # The emulator echoes the turn's first text, here the folded one.
    assert next(b.text for b in reply.content if b.type == "text").startswith("Emulated reply.")
    assert stack.forwarded()["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Rainy"},
        {"type": "text", "text": f"Result of tool call toolu_gone returned earlier: {OUTPUT}"},
        {"type": "text", "text": NEXT},
    ]


def test_gemini_orphan_function_response_is_folded(stack: Stack) -> None:
    contents: list[Any] = [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"text": "Let me look."}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": OUTPUT}}}]},
        {"role": "model", "parts": [{"text": "It is sunny."}]},
        {"role": "user", "parts": [{"text": NEXT}]},
    ]

    def client(base: str) -> genai.Client:
        return genai.Client(api_key=GOOGLE_KEY, http_options=genai_types.HttpOptions(base_url=base, timeout=10_000))

    with client(stack.emulator) as direct, pytest.raises(genai_errors.ClientError) as info:
        direct.models.generate_content(model=GEMINI_MODEL, contents=contents)
    assert info.value.code == 400
    assert (
        info.value.message == "Please ensure that function response turn comes immediately after a function call turn."
    )
    with client(stack.suture) as through:
        assert through.models.generate_content(model=GEMINI_MODEL, contents=contents).text == REPLY
    folded = stack.forwarded()["contents"][2]
    assert folded == {
        "role": "user",
        "parts": [{"text": f'Result of tool `get_weather` returned earlier: {{"output":"{OUTPUT}"}}'}],
    }


def test_bedrock_orphan_tool_result_is_folded_out_of_the_results_turn(stack: Stack) -> None:
    args: dict[str, Any] = {
        "modelId": BEDROCK_MODEL,
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]},
        "messages": [
            {"role": "user", "content": [{"text": "weather?"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "t1", "content": [{"text": "Rainy"}]}},
                    {"toolResult": {"toolUseId": "t_gone", "content": [{"text": OUTPUT}]}},
                ],
            },
            {"role": "assistant", "content": [{"text": "Rainy here."}]},
            {"role": "user", "content": [{"text": NEXT}]},
        ],
    }

    with pytest.raises(ClientError) as info:
        _bedrock(stack.emulator, None).converse(**args)
    assert info.value.response["Error"]["Message"] == (
        "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."
    )
    reply = _bedrock(stack.suture, CLIENT_KEY).converse(**args)
    assert "".join(b.get("text", "") for b in reply["output"]["message"]["content"]) == REPLY
    messages = stack.forwarded()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == [{"toolResult": {"toolUseId": "t1", "content": [{"text": "Rainy"}]}}]
    assert messages[4]["content"] == [{"text": f"Result of tool call t_gone returned earlier: {OUTPUT}"}]


def test_bedrock_conversation_starting_with_the_assistant_gets_a_user_message_first(stack: Stack) -> None:
    args: dict[str, Any] = {
        "modelId": BEDROCK_MODEL,
        "messages": [
            {"role": "assistant", "content": [{"text": "Here is the plan."}]},
            {"role": "user", "content": [{"text": NEXT}]},
        ],
    }
    with pytest.raises(ClientError) as info:
        _bedrock(stack.emulator, None).converse(**args)
    assert info.value.response["Error"]["Message"] == (
        "A conversation must start with a user message. Try again with a conversation that starts with a user message."
    )
    reply = _bedrock(stack.suture, CLIENT_KEY).converse(**args)
    assert "".join(b.get("text", "") for b in reply["output"]["message"]["content"]) == REPLY
    messages = stack.forwarded()["messages"]
    assert messages[0] == {"role": "user", "content": [{"text": "(Conversation continues.)"}]}
    assert messages[1:] == args["messages"]


def _bedrock(base: str, key: str | None) -> Any:
    """boto3's Converse client for ``base``; through Suture, ``key`` is Suture's client key."""
    bedrock = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=base,
        aws_access_key_id="AKIDCLIENT0000000000",
        aws_secret_access_key="client-aws-secret",
        config=Config(signature_version="v4", retries={"total_max_attempts": 1}, read_timeout=10),
    )
    if key is not None:
        bedrock.meta.events.register(
            "before-sign.bedrock-runtime.*", lambda request, **_: request.headers.__setitem__("x-api-key", key)
        )
    return bedrock


def test_bedrock_failed_tool_without_a_message_gets_one(stack: Stack) -> None:
    args: dict[str, Any] = {
        "modelId": BEDROCK_MODEL,
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}]},
        "messages": [
            {"role": "user", "content": [{"text": "weather?"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [], "status": "error"}}]},
        ],
    }
    with pytest.raises(ClientError) as info:
        _bedrock(stack.emulator, None).converse(**args)
    assert info.value.response["Error"]["Message"] == (
        "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."
    )
    reply = _bedrock(stack.suture, CLIENT_KEY).converse(**args)
    assert reply["output"]["message"]["role"] == "assistant"
    result = stack.forwarded()["messages"][2]["content"][0]["toolResult"]
    assert result == {
        "toolUseId": "t1",
        "content": [{"text": "The tool failed without an error message."}],
        "status": "error",
    }


def test_bedrock_instructions_without_a_message_get_a_user_message(stack: Stack) -> None:
    args: dict[str, Any] = {"modelId": BEDROCK_MODEL, "system": [{"text": "Say hello in French."}], "messages": []}
    with pytest.raises(ClientError) as info:
        _bedrock(stack.emulator, None).converse(**args)
    assert info.value.response["Error"]["Message"] == (
        "A conversation must start with a user message. Try again with a conversation that starts with a user message."
    )
    reply = _bedrock(stack.suture, CLIENT_KEY).converse(**args)
    assert reply["output"]["message"]["role"] == "assistant"
    forwarded = stack.forwarded()
    assert forwarded["system"] == [{"text": "Say hello in French."}]
    assert forwarded["messages"] == [{"role": "user", "content": [{"text": "(empty message)"}]}]
