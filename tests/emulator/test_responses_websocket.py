"""The emulator's Responses WebSocket (OpenAI's WebSocket mode), with the official openai SDK's
``responses.connect()`` and a plain WebSocket client: the same checks and events as the POST route."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from proxy.emulator.app import OPENAI_MISSING_KEY
from tests._support.emulator import Emulator, recorded_requests
from tests._support.proxy_e2e import wait_for

MODEL = "gpt-4.1"
CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
BROKEN = [{"role": "user", "content": "weather?"}, CALL, {"role": "user", "content": "and tomorrow?"}]


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[OpenAI]:
    with OpenAI(base_url=emulator.url + "/v1", api_key="sk-test", max_retries=0) as client:
        yield client


def socket(emulator: Emulator, key: str | None = "sk-test") -> ClientConnection:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = emulator.url.replace("http://", "ws://") + "/v1/responses"
    return connect(url, additional_headers=headers, open_timeout=10, proxy=None)


def events(ws: ClientConnection) -> list[dict[str, Any]]:
    out = []
    while True:
        out.append(json.loads(ws.recv(timeout=10)))
        if out[-1]["type"] in ("response.completed", "error"):
            return out


def test_the_sdk_gets_the_events_the_sse_stream_carries(client: OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="stream please") as stream:
        streamed = [e.type for e in stream]
    with client.responses.connect() as connection:
        connection.response.create(model=MODEL, input="stream please")
        received = []
        for event in connection:
            received.append(event)
            if event.type == "response.completed":
                break
    assert [e.type for e in received] == streamed
    assert [e.sequence_number for e in received] == list(range(len(received)))
    assert received[-1].response.output_text == 'Emulated reply. Last user text: "stream please"'


def test_a_broken_transcript_gets_the_post_route_s_message_as_an_error_event(
    client: OpenAI, emulator: Emulator
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.responses.create(model=MODEL, input=BROKEN)  # type: ignore[arg-type]
    with socket(emulator) as ws:
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": BROKEN}))
        [error] = events(ws)
        # The connection stays open for the next event.
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "again"}))
        assert events(ws)[-1]["type"] == "response.completed"
    assert error == {"type": "error", "status": 400, "error": info.value.body}
    assert error["error"]["message"] == "No tool output found for function call call_1."
    assert recorded_requests(emulator.record)[-2]["status"] == 400


def test_a_stored_chain_is_checked_as_on_post(emulator: Emulator) -> None:
    with socket(emulator) as ws:
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "CALL_TOOL get_weather"}))
        response = events(ws)[-1]["response"]
        call_id = response["output"][0]["call_id"]
        ws.send(
            json.dumps(
                {"type": "response.create", "model": MODEL, "previous_response_id": response["id"], "input": "next"}
            )
        )
        [error] = events(ws)
    assert error["error"]["message"] == f"No tool output found for function call {call_id}."


def test_a_warm_up_gets_a_response_without_output(emulator: Emulator) -> None:
    with socket(emulator) as ws:
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "hi", "generate": False}))
        received = events(ws)
    assert [e["type"] for e in received] == ["response.created", "response.completed"]
    assert received[-1]["response"]["output"] == []


def test_messages_it_does_not_take_are_refused_with_error_events(emulator: Emulator) -> None:
    with socket(emulator) as ws:
        ws.send("{not json")
        [bad_json] = events(ws)
        ws.send(json.dumps({"type": "session.update"}))
        [unknown] = events(ws)
        ws.send(json.dumps({"type": "response.create", "input": "hi"}))
        [no_model] = events(ws)
    assert bad_json["status"] == unknown["status"] == no_model["status"] == 400
    assert "'session.update'" in unknown["error"]["message"]
    assert no_model["error"]["message"] == "Missing required parameter: 'model'."


def test_the_handshake_needs_a_key(emulator: Emulator) -> None:
    with pytest.raises(InvalidStatus) as info:
        socket(emulator, key=None)
    assert info.value.response.status_code == 401
    assert json.loads(info.value.response.body)["error"]["message"] == OPENAI_MISSING_KEY


def test_closes_are_recorded_and_can_be_asked_for(emulator: Emulator) -> None:
    with socket(emulator) as ws:
        ws.send(json.dumps({"type": "response.create", "model": MODEL, "input": "CLOSE_SOCKET 4005 going now"}))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    assert (ws.close_code, ws.close_reason) == (4005, "going now")
    with socket(emulator) as ws:
        ws.close(4006, "client leaves")
    wanted = {"event": "websocket_closed", "path": "/v1/responses", "code": 4006, "reason": "client leaves"}
    # Written once the server has read the close, which may be just after the client has its answer.
    assert wait_for(lambda: wanted in map(json.loads, emulator.record.read_text(encoding="utf-8").splitlines()))
