"""The official anthropic SDK against the emulator's /v1/messages."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import pytest
from anthropic import Anthropic
from anthropic.types import Message

from proxy.emulator.app import ANTHROPIC_MISSING_KEY, ANTHROPIC_MISSING_VERSION
from tests._support.emulator import Emulator
from tests._support.seed_transcripts import ANTHROPIC_TOOLS, CORRECTION, anthropic_repaired, anthropic_seed

MODEL = "claude-sonnet-4-6"
A1 = (
    "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_slow_1. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[Anthropic]:
    with Anthropic(base_url=emulator.url, api_key="sk-ant-test", max_retries=0) as client:
        yield client


def test_text_reply(client: Anthropic) -> None:
    raw = client.messages.with_raw_response.create(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "Hello there"}]
    )
    message = raw.parse()
    assert raw.headers["request-id"].startswith("req_")
    assert message.id.startswith("msg_")
    assert message.model == MODEL
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    assert text_of(message) == 'Emulated reply. Last user text: "Hello there"'
    assert message.usage.input_tokens == 3  # "user", "Hello", "there"


def test_tool_call_has_fresh_ids(client: Anthropic) -> None:
    ids = set()
    for _ in range(2):
        message = client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "CALL_TOOL get_weather"}],
            tools=ANTHROPIC_TOOLS,
        )
        assert message.stop_reason == "tool_use"
        tool_use = message.content[-1]
        assert tool_use.type == "tool_use"
        assert tool_use.name == "get_weather"
        assert tool_use.input == {}
        assert tool_use.id.startswith("toolu_")
        ids.add(tool_use.id)
    assert len(ids) == 2


def test_raw_stream_parses(client: Anthropic) -> None:
    with client.messages.create(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "stream please"}], stream=True
    ) as stream:
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]  # the SDK hides pings
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta")
    assert text == 'Emulated reply. Last user text: "stream please"'


def test_wire_format(emulator: Emulator) -> None:
    response = httpx.post(
        emulator.url + "/v1/messages",
        headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
        json={"model": MODEL, "max_tokens": 8, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"] == "no-cache"
    frames = response.text.split("\n\n")
    assert frames[0].startswith('event: message_start\ndata: {"type":"message_start"')
    assert frames[2] == 'event: ping\ndata: {"type":"ping"}'
    assert frames[-2] == 'event: message_stop\ndata: {"type":"message_stop"}'
    assert frames[-1] == ""


def test_stream_helper_accumulates_tool_call(client: Anthropic) -> None:
    with client.messages.stream(
        model=MODEL,
        max_tokens=64,
        messages=[{"role": "user", "content": "CALL_TOOL get_weather"}],
        tools=ANTHROPIC_TOOLS,
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert [b.type for b in final.content] == ["text", "tool_use"]
    tool_use = final.content[1]
    assert tool_use.type == "tool_use"
    assert tool_use.name == "get_weather"
    assert tool_use.id.startswith("toolu_")
    assert tool_use.input == {}
    assert final.usage.output_tokens > 1


def test_missing_key_is_401(client: Anthropic) -> None:
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-Api-Key": anthropic.omit, "Authorization": anthropic.omit},
        )
    assert caught.value.status_code == 401
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": ANTHROPIC_MISSING_KEY},
    }


def test_missing_version_is_400(emulator: Emulator) -> None:
    response = httpx.post(
        emulator.url + "/v1/messages",
        headers={"x-api-key": "sk-ant-test"},
        json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
    )
    assert response.status_code == 400
    assert response.json()["error"] == {"type": "invalid_request_error", "message": ANTHROPIC_MISSING_VERSION}


def test_seed_transcript_is_rejected(client: Anthropic) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=anthropic_seed(),
            tools=ANTHROPIC_TOOLS,
        )
    assert A1 in caught.value.message


@pytest.mark.parametrize("stream", [False, True])
def test_repaired_transcript_is_accepted(client: Anthropic, stream: bool) -> None:
    messages, tools = anthropic_repaired(), ANTHROPIC_TOOLS
    message: Message
    if stream:
        with client.messages.stream(model=MODEL, max_tokens=64, messages=messages, tools=tools) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(model=MODEL, max_tokens=64, messages=messages, tools=tools)
    assert text_of(message) == f'Emulated reply. Last user text: "{CORRECTION}"'


def text_of(message: Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")
