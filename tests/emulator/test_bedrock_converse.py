"""boto3's bedrock-runtime client against the emulator's Converse and ConverseStream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError

from proxy.emulator.eventstream import event, message
from tests._support.emulator import Emulator, bedrock_client
from tests._support.seed_transcripts import BEDROCK_TOOL_CONFIG, CORRECTION, bedrock_repaired, bedrock_seed

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[Any]:
    client = bedrock_client(emulator.url)
    yield client
    client.close()


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"text": text}]}]


def stream_text(response: dict[str, Any]) -> tuple[str, list[str]]:
    kinds, text = [], ""
    for item in response["stream"]:
        [(kind, body)] = item.items()
        kinds.append(kind)
        if kind == "contentBlockDelta" and "text" in body["delta"]:
            text += body["delta"]["text"]
    return text, kinds


def test_event_stream_frames_parse_with_botocore() -> None:
    buffer = EventStreamBuffer()
    frame = event("contentBlockDelta", {"delta": {"text": "héllo"}, "contentBlockIndex": 0})
    # Fed in two pieces, as a socket would deliver them.
    buffer.add_data(frame[:7])
    buffer.add_data(frame[7:] + message({":message-type": "event", ":event-type": "messageStop"}, b"{}"))
    first, second = list(buffer)
    assert first.headers[":event-type"] == "contentBlockDelta"
    assert first.headers[":content-type"] == "application/json"
    assert json.loads(first.payload) == {"delta": {"text": "héllo"}, "contentBlockIndex": 0}
    assert second.headers[":event-type"] == "messageStop"


def test_text_reply(client: Any) -> None:
    response = client.converse(modelId=MODEL, messages=user("Hello there"))
    assert response["output"]["message"]["content"] == [{"text": 'Emulated reply. Last user text: "Hello there"'}]
    assert response["stopReason"] == "end_turn"
    assert response["usage"]["inputTokens"] == 2
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_tool_call(client: Any) -> None:
    response = client.converse(modelId=MODEL, messages=user("CALL_TOOL get_weather"), toolConfig=BEDROCK_TOOL_CONFIG)
    assert response["stopReason"] == "tool_use"
    [_, tool] = response["output"]["message"]["content"]
    assert tool["toolUse"]["name"] == "get_weather"
    assert tool["toolUse"]["input"] == {}
    assert tool["toolUse"]["toolUseId"].startswith("tooluse_")


def test_stream_text(client: Any) -> None:
    response = client.converse_stream(modelId=MODEL, messages=user("stream please"))
    assert response["ResponseMetadata"]["HTTPHeaders"]["content-type"] == "application/vnd.amazon.eventstream"
    text, kinds = stream_text(response)
    assert text == 'Emulated reply. Last user text: "stream please"'
    assert kinds[0] == "messageStart"
    assert kinds[-2:] == ["messageStop", "metadata"]


def test_stream_tool_call(client: Any) -> None:
    response = client.converse_stream(
        modelId=MODEL, messages=user("CALL_TOOL get_weather"), toolConfig=BEDROCK_TOOL_CONFIG
    )
    events = list(response["stream"])
    [start] = [e["contentBlockStart"] for e in events if "contentBlockStart" in e]
    assert start["start"]["toolUse"]["name"] == "get_weather"
    pieces = [
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert "".join(pieces) == "{}"
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"


def test_unsigned_request_is_403(emulator: Emulator) -> None:
    response = httpx.post(f"{emulator.url}/model/{MODEL}/converse", json={"messages": user("hi")})
    assert response.status_code == 403
    assert response.headers["x-amzn-errortype"] == "MissingAuthenticationTokenException"
    assert response.json() == {"message": "Missing Authentication Token"}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
def test_seed_transcript_is_rejected(client: Any, stream: bool) -> None:
    call = client.converse_stream if stream else client.converse
    with pytest.raises(ClientError) as caught:
        call(modelId=MODEL, messages=bedrock_seed(), toolConfig=BEDROCK_TOOL_CONFIG)
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "A conversation must alternate between user and assistant roles" in str(caught.value)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
def test_repaired_transcript_is_accepted(client: Any, stream: bool) -> None:
    if stream:
        text, _ = stream_text(
            client.converse_stream(modelId=MODEL, messages=bedrock_repaired(), toolConfig=BEDROCK_TOOL_CONFIG)
        )
    else:
        response = client.converse(modelId=MODEL, messages=bedrock_repaired(), toolConfig=BEDROCK_TOOL_CONFIG)
        text = response["output"]["message"]["content"][0]["text"]
    assert text == f'Emulated reply. Last user text: "{CORRECTION}"'
