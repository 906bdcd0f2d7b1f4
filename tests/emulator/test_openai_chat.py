"""The official openai SDK against the emulator's /v1/chat/completions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from proxy.emulator.app import OPENAI_MISSING_KEY
from tests._support.emulator import Emulator
from tests._support.seed_transcripts import CHAT_TOOLS, CORRECTION, chat_repaired, chat_seed

MODEL = "gpt-4o-mini"
O1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: call_slow_1"
)


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[OpenAI]:
    with OpenAI(base_url=emulator.url + "/v1", api_key="sk-test", max_retries=0) as client:
        yield client


def test_text_reply(client: OpenAI) -> None:
    completion = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hello there"}])
    choice = completion.choices[0]
    assert choice.message.content == 'Emulated reply. Last user text: "Hello there"'
    assert choice.finish_reason == "stop"
    assert completion.model == MODEL
    assert completion.id.startswith("chatcmpl-")
    assert completion.usage is not None and completion.usage.prompt_tokens == 3  # "user", "Hello", "there"
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


def test_request_id_header(client: OpenAI) -> None:
    raw = client.chat.completions.with_raw_response.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert raw.headers["x-request-id"].startswith("req_")


def test_tool_call_has_fresh_ids(client: OpenAI) -> None:
    ids = set()
    for _ in range(2):
        completion = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "CALL_TOOL get_weather"}], tools=CHAT_TOOLS
        )
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        (call,) = choice.message.tool_calls or []
        assert call.type == "function"
        assert call.function.name == "get_weather"
        assert call.function.arguments == "{}"
        assert call.id.startswith("call_")
        ids.add(call.id)
    assert len(ids) == 2


def test_stream_text(client: OpenAI) -> None:
    with client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    ) as stream:
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == 'Emulated reply. Last user text: "stream please"'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_tool_call_accumulates(client: OpenAI) -> None:
    with client.chat.completions.stream(
        model=MODEL, messages=[{"role": "user", "content": "CALL_TOOL get_weather"}], tools=CHAT_TOOLS
    ) as stream:
        final = stream.get_final_completion()
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.function.name == "get_weather"
    assert call.id.startswith("call_")
    assert call.function.arguments == "{}"


def test_tool_result_ends_the_loop(client: OpenAI) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "CALL_TOOL get_weather"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ]
    completion = client.chat.completions.create(model=MODEL, messages=messages, tools=CHAT_TOOLS)
    assert completion.choices[0].finish_reason == "stop"


def test_missing_key_is_401(client: OpenAI) -> None:
    # The SDK refuses to start without a key, so drop the header from the request instead.
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], extra_headers={"Authorization": openai.omit}
        )
    assert caught.value.status_code == 401
    # The SDK exposes the inner "error" object as .body.
    assert caught.value.body == {
        "message": OPENAI_MISSING_KEY,
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }


def test_seed_transcript_is_rejected(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, messages=chat_seed(), tools=CHAT_TOOLS)
    assert caught.value.status_code == 400
    assert O1 in caught.value.message


@pytest.mark.parametrize("stream", [False, True])
def test_repaired_transcript_is_accepted(client: OpenAI, stream: bool) -> None:
    messages = chat_repaired()
    if stream:
        with client.chat.completions.stream(model=MODEL, messages=messages, tools=CHAT_TOOLS) as events:
            content = events.get_final_completion().choices[0].message.content
    else:
        completion = client.chat.completions.create(model=MODEL, messages=messages, tools=CHAT_TOOLS)
        content = completion.choices[0].message.content
    assert content == f'Emulated reply. Last user text: "{CORRECTION}"'
