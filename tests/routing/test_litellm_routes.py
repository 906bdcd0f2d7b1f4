"""Any client format to any provider through litellm, repaired for the provider reached.

Each test drives the running Suture with an official SDK. The provider's endpoint is a loopback
fake that applies that provider's own validator, so a 200 from it means the provider would have
accepted the transcript Suture sent.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable

import anthropic
import openai
import pytest

from tests._support.litellm_routes import CLIENT_KEY, GEMINI_KEY, NO_LITELLM, Provider
from tests._support.litellm_seeds import (
    CHAT_PROVIDERS,
    SEED_CALL_ID,
    TOOLS_CHAT,
    TOOLS_MESSAGES,
    assert_repaired_and_accepted,
    seed_chat,
    seed_messages,
)

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    # litellm's own pydantic types, met on its request path (in Suture's server thread).
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]


@pytest.mark.parametrize("name", CHAT_PROVIDERS)
def test_openai_client_reaches_provider_repaired(
    suture_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers[name]
    raw = openai_at(suture_url).chat.completions.with_raw_response.create(
        model=provider.model, messages=seed_chat(), tools=TOOLS_CHAT
    )
    completion = raw.parse()
    assert int(raw.headers["x-suture-repairs"]) >= 1
    assert_repaired_and_accepted(provider)
    assert completion.object == "chat.completion"
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content == 'Emulated reply. Last user text: "Actually, make it London."'


@pytest.mark.parametrize("name", CHAT_PROVIDERS)
def test_openai_client_streams_from_provider(
    suture_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers[name]
    with openai_at(suture_url).chat.completions.with_streaming_response.create(
        model=provider.model, messages=seed_chat(), tools=TOOLS_CHAT, stream=True
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    # The OpenAI wire format: data lines only, the last one [DONE].
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    chunks = [openai.types.chat.ChatCompletionChunk.model_validate_json(line[6:]) for line in lines[:-1]]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == 'Emulated reply. Last user text: "Actually, make it London."'
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert_repaired_and_accepted(provider)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("name", CHAT_PROVIDERS)
def test_openai_client_gets_tool_calls(
    suture_url: str, providers: dict[str, Provider], name: str, stream: bool, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    client = openai_at(suture_url)
    messages = seed_chat("Never mind. CALL_TOOL get_weather")
    if stream:
        chunks = list(
            client.chat.completions.create(
                model=providers[name].model, messages=messages, tools=TOOLS_CHAT, stream=True
            )
        )
        calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
        assert calls and calls[0].function and calls[0].function.name == "get_weather"
        assert calls[0].id
    else:
        completion = client.chat.completions.create(model=providers[name].model, messages=messages, tools=TOOLS_CHAT)
        message = completion.choices[0].message
        assert message.tool_calls and message.tool_calls[0].function.name == "get_weather"
        assert message.tool_calls[0].id
    assert_repaired_and_accepted(providers[name])


def test_mistral_gets_its_own_ids(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    openai_at(suture_url).chat.completions.create(
        model=providers["mistral"].model, messages=seed_chat(), tools=TOOLS_CHAT
    )
    body = assert_repaired_and_accepted(providers["mistral"])
    sent = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
    sent += [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert sent and all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in sent)
    assert len(set(sent)) == 1 and SEED_CALL_ID not in sent
    # No user message right after a tool message (Mistral's role order).
    roles = [m["role"] for m in body["messages"]]
    assert all(not (a == "tool" and b == "user") for a, b in itertools.pairwise(roles))


def test_bedrock_gets_tool_config_without_client_tools(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    # Without toolConfig, litellm would flatten the tool blocks to text; Suture declares the tool.
    openai_at(suture_url).chat.completions.create(model=providers["bedrock"].model, messages=seed_chat())
    body = assert_repaired_and_accepted(providers["bedrock"])
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["get_weather"]
    assert any("toolUse" in b for m in body["messages"] for b in m["content"])


def test_keys_reach_the_provider(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    client = openai_at(suture_url)
    client.chat.completions.create(model=providers["gemini"].model, messages=seed_chat(), tools=TOOLS_CHAT)
    client.chat.completions.create(model=providers["mistral"].model, messages=seed_chat(), tools=TOOLS_CHAT)
    # Suture's own key (api_key_env) for Gemini; the client's own key passes through to Mistral.
    assert providers["gemini"].fake.last.headers["x-goog-api-key"] == GEMINI_KEY
    assert providers["mistral"].fake.last.headers["authorization"] == f"Bearer {CLIENT_KEY}"
    # Bedrock is signed with AWS credentials, never the client's key.
    client.chat.completions.create(model=providers["bedrock"].model, messages=seed_chat(), tools=TOOLS_CHAT)
    assert providers["bedrock"].fake.last.headers["authorization"].startswith("AWS4-HMAC-SHA256 ")


@pytest.mark.parametrize("name", ["compat"])
def test_anthropic_client_reaches_openai_compatible_provider(
    suture_url: str, providers: dict[str, Provider], name: str, anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    provider = providers[name]
    raw = anthropic_at(suture_url).messages.with_raw_response.create(
        model=provider.model, max_tokens=256, messages=seed_messages(), tools=TOOLS_MESSAGES
    )
    message = raw.parse()
    assert int(raw.headers["x-suture-repairs"]) >= 1
    assert_repaired_and_accepted(provider)
    assert message.type == "message" and message.role == "assistant"
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == 'Emulated reply. Last user text: "Actually, make it London."'  # type: ignore[union-attr]


def test_anthropic_client_streams_from_openai_compatible_provider(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    provider = providers["compat"]
    with anthropic_at(suture_url).messages.stream(
        model=provider.model, max_tokens=256, messages=seed_messages(), tools=TOOLS_MESSAGES
    ) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_message()
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert "content_block_delta" in events
    assert final.content[0].text == 'Emulated reply. Last user text: "Actually, make it London."'  # type: ignore[union-attr]
    assert_repaired_and_accepted(provider)


def test_anthropic_client_streams_tool_use(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    with anthropic_at(suture_url).messages.stream(
        model=providers["compat"].model,
        max_tokens=256,
        messages=seed_messages("CALL_TOOL get_weather"),
        tools=TOOLS_MESSAGES,
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    tool_use = [b for b in final.content if b.type == "tool_use"]
    assert tool_use and tool_use[0].name == "get_weather" and tool_use[0].id


def test_anthropic_client_reaches_mistral(
    suture_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    anthropic_at(suture_url).messages.create(
        model=providers["mistral"].model, max_tokens=256, messages=seed_messages(), tools=TOOLS_MESSAGES
    )
    assert_repaired_and_accepted(providers["mistral"])


FUNCTIONS_OUTPUT = '{"temperature": 18, "sky": "sunny"}'


@pytest.mark.parametrize("name", ["anthropic", "gemini", "bedrock", "mistral"])
def test_a_functions_api_transcript_reaches_a_provider_with_tool_calls_only(
    suture_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    # An agent on OpenAI's legacy functions API (LangChain's functions agent): without PV012 the
    # call was dropped as an empty message, and litellm gave the result an id no call had.
    messages = [
        {"role": "user", "content": "What's the weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {"role": "function", "name": "get_weather", "content": FUNCTIONS_OUTPUT},
        {"role": "assistant", "content": "It is 18C and sunny in Paris."},
        {"role": "user", "content": "And in London?"},
    ]
    functions = [TOOLS_CHAT[0]["function"]]
    raw = openai_at(suture_url).chat.completions.with_raw_response.create(
        model=providers[name].model, messages=messages, functions=functions, function_call="auto"
    )
    assert int(raw.headers["x-suture-repairs"]) >= 1
    assert raw.parse().choices[0].message.content == 'Emulated reply. Last user text: "And in London?"'
    body = assert_repaired_and_accepted(providers[name])
    # The call and what the function returned reached the provider, paired.
    assert "sunny" in json.dumps(body)
