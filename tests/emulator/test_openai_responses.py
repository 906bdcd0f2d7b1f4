"""The official openai SDK against the emulator's /v1/responses."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from openai import OpenAI

from tests._support.emulator import Emulator
from tests._support.seed_transcripts import CORRECTION, RESPONSES_TOOLS, responses_repaired, responses_seed

MODEL = "gpt-4.1"


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[OpenAI]:
    with OpenAI(base_url=emulator.url + "/v1", api_key="sk-test", max_retries=0) as client:
        yield client


def test_text_reply(client: OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="Hello there")
    assert response.output_text == 'Emulated reply. Last user text: "Hello there"'
    assert response.status == "completed"
    assert response.model == MODEL
    assert response.id.startswith("resp_")
    assert response.output[0].type == "message" and response.output[0].id.startswith("msg_")
    assert response.usage is not None and response.usage.input_tokens == 2


def test_tool_call_has_fresh_ids(client: OpenAI) -> None:
    call_ids = set()
    for _ in range(2):
        response = client.responses.create(
            model=MODEL, input=[{"role": "user", "content": "CALL_TOOL get_weather"}], tools=RESPONSES_TOOLS
        )
        (item,) = response.output
        assert item.type == "function_call"
        assert item.name == "get_weather"
        assert item.arguments == "{}"
        assert item.id is not None and item.id.startswith("fc_")
        assert item.call_id.startswith("call_")
        call_ids.add(item.call_id)
    assert len(call_ids) == 2


def test_stream_text(client: OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="stream please") as stream:
        events = list(stream)
        final = stream.get_final_response()
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == final.output_text == 'Emulated reply. Last user text: "stream please"'
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))


def test_stream_tool_call_accumulates(client: OpenAI) -> None:
    with client.responses.stream(
        model=MODEL, input=[{"role": "user", "content": "CALL_TOOL get_weather"}], tools=RESPONSES_TOOLS
    ) as stream:
        final = stream.get_final_response()
    (item,) = final.output
    assert item.type == "function_call"
    assert item.name == "get_weather"
    assert item.call_id.startswith("call_")
    assert item.arguments == "{}"


def test_raw_stream_parses(client: OpenAI) -> None:
    with client.responses.create(model=MODEL, input="raw", stream=True) as stream:
        kinds = [event.type for event in stream]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-2:] == ["response.output_item.done", "response.completed"]


def test_seed_transcript_is_rejected(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=responses_seed(), tools=RESPONSES_TOOLS)
    assert "No tool output found for function call call_slow_1" in caught.value.message


@pytest.mark.parametrize("stream", [False, True])
def test_repaired_transcript_is_accepted(client: OpenAI, stream: bool) -> None:
    items = responses_repaired()
    if stream:
        with client.responses.stream(model=MODEL, input=items, tools=RESPONSES_TOOLS) as events:
            text = events.get_final_response().output_text
    else:
        text = client.responses.create(model=MODEL, input=items, tools=RESPONSES_TOOLS).output_text
    assert text == f'Emulated reply. Last user text: "{CORRECTION}"'


@pytest.mark.parametrize("stream", [False, True])
def test_a_reasoning_models_own_output_replays_cleanly(client: OpenAI, stream: bool) -> None:
    """gpt-5 puts a reasoning item before its call, so replaying the output with the call's
    fc_ id and its result is a valid transcript, not one without its reasoning (R4)."""
    ask = [{"role": "user", "content": "CALL_TOOL get_weather"}]
    if stream:
        with client.responses.stream(model="gpt-5", input=ask, tools=RESPONSES_TOOLS) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(model="gpt-5", input=ask, tools=RESPONSES_TOOLS)
    reasoning, call = response.output
    assert reasoning.type == "reasoning" and reasoning.id.startswith("rs_")
    assert call.type == "function_call" and call.id is not None and call.id.startswith("fc_")
    replay = [
        *ask,
        *(i.model_dump(exclude_none=True) for i in response.output),
        {"type": "function_call_output", "call_id": call.call_id, "output": "Sunny"},
        {"role": "user", "content": "thanks"},
    ]
    assert client.responses.create(model="gpt-5", input=replay).output_text.endswith('"thanks"')


def _called(client: OpenAI, *, stream: bool = False, **extra: object) -> tuple[str, str]:
    """A stored response that called get_weather: its id and the call's id."""
    request = {"model": MODEL, "input": "CALL_TOOL get_weather", "tools": RESPONSES_TOOLS, **extra}
    if stream:
        with client.responses.stream(**request) as events:  # type: ignore[arg-type]
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)  # type: ignore[arg-type]
    (item,) = response.output
    assert item.type == "function_call"
    return response.id, item.call_id


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_chain_must_answer_the_calls_of_the_response_it_continues(client: OpenAI, stream: bool) -> None:
    # openai/codex#394: the call lives in the stored response, and the next turn has only text.
    response_id, call_id = _called(client, stream=stream)
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, previous_response_id=response_id, input="Never mind.")
    assert caught.value.body == {
        "message": f"No tool output found for function call {call_id}.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    answered = [
        {"type": "function_call_output", "call_id": call_id, "output": "sunny"},
        {"role": "user", "content": "Thanks."},
    ]
    reply = client.responses.create(model=MODEL, previous_response_id=response_id, input=answered)  # type: ignore[arg-type]
    assert reply.output_text == 'Emulated reply. Last user text: "Thanks."'


def test_a_chain_to_an_unstored_or_unknown_response_is_taken(client: OpenAI) -> None:
    response_id, _ = _called(client, store=False)
    for previous in (response_id, "resp_not_made_by_this_emulator"):
        reply = client.responses.create(model=MODEL, previous_response_id=previous, input="Never mind.")
        assert reply.output_text == 'Emulated reply. Last user text: "Never mind."'
