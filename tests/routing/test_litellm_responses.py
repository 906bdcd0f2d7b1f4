"""Responses API clients routed through litellm: repaired for the provider, answered in Responses.

Each test drives the running Suture with the official OpenAI SDK's ``client.responses``. The
providers have no Responses API of their own: litellm bridges the request to each one's format,
and its loopback fake applies that provider's own validator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest

from tests._support.litellm_routes import NO_LITELLM, Provider
from tests._support.litellm_seeds import (
    CORRECTION,
    SEED_CALL_ID,
    TOOLS_RESPONSES,
    assert_repaired_and_accepted,
    seed_responses,
)

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

REPLY = f'Emulated reply. Last user text: "{CORRECTION}"'
# The OpenAI-compatible fake judges what it receives by DeepSeek's rules, and DeepSeek refuses an
# assistant message whose content is a list of parts ("invalid type: sequence, expected a string",
# BerriAI/litellm#9905), which litellm's Responses-to-Chat bridge makes of an assistant message's
# output_text parts: the route's provider (deepseek) has Suture repair the Responses body by
# DeepSeek's rules on that bridge's view (PV008 gives the item a string).
# Providers litellm bridges to: Anthropic's Messages, Gemini, Bedrock Converse, Mistral's and an
# OpenAI-compatible server's Chat Completions (Mistral and DeepSeek get their own Chat rules on the
# Chat body the bridge makes: 9-character call ids, an assistant message between outputs and a user).
BRIDGED = ["anthropic", "gemini", "bedrock", "mistral", "compat"]


@pytest.mark.parametrize("name", BRIDGED)
def test_responses_client_reaches_provider_repaired(
    suture_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers[name]
    raw = openai_at(suture_url).responses.with_raw_response.create(
        model=provider.model, input=seed_responses(), tools=TOOLS_RESPONSES
    )
    response = raw.parse()
    assert int(raw.headers["x-suture-repairs"]) >= 1
    assert_repaired_and_accepted(provider)
    assert response.object == "response" and response.status == "completed"
    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == REPLY


@pytest.mark.parametrize(
    "stored", [{"previous_response_id": "resp_earlier"}, {"background": True}, {"prompt": {"id": "pmpt_1"}}]
)
def test_state_stored_at_openai_is_refused_not_dropped(
    suture_url: str, providers: dict[str, Provider], stored: dict[str, Any], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers["anthropic"]
    with pytest.raises(openai.BadRequestError) as info:
        openai_at(suture_url).responses.create(model=provider.model, input=seed_responses(), **stored)
    [key] = stored
    assert f"{key} refers to state stored at OpenAI" in str(info.value)
    assert "send the whole conversation in `input`" in str(info.value)
    assert provider.fake.received == []  # nothing reached the provider


@pytest.mark.parametrize("name", ["anthropic", "mistral", "compat"])
def test_responses_client_streams_from_provider(
    suture_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers[name]
    events = list(
        openai_at(suture_url).responses.create(
            model=provider.model, input=seed_responses(), tools=TOOLS_RESPONSES, stream=True
        )
    )
    types = [event.type for event in events]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == REPLY
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == REPLY
    # The events are numbered in order, as OpenAI numbers them.
    numbers = [event.sequence_number for event in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert_repaired_and_accepted(provider)


def test_responses_stream_names_each_event(
    suture_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    with openai_at(suture_url).responses.with_streaming_response.create(
        model=providers["anthropic"].model, input=seed_responses(), stream=True
    ) as answer:
        assert answer.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in answer.iter_lines() if line]
    # OpenAI's Responses wire format: an `event:` line naming the data's type, no [DONE] at the end.
    assert len(lines) % 2 == 0
    for event, data in zip(lines[::2], lines[1::2], strict=True):
        assert event.startswith("event: ") and data.startswith("data: ")
        assert f'"type":"{event[7:]}"' in data
    assert lines[-2] == "event: response.completed"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("name", ["anthropic", "mistral", "compat"])
def test_responses_client_gets_tool_calls(
    suture_url: str, providers: dict[str, Provider], name: str, stream: bool, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    client = openai_at(suture_url)
    request: dict[str, Any] = {
        "model": providers[name].model,
        "input": seed_responses("Never mind. CALL_TOOL get_weather"),
        "tools": TOOLS_RESPONSES,
    }
    if stream:
        events = list(client.responses.create(stream=True, **request))
        # litellm's bridge closes the text item after the call item: output_index gives the order.
        done = sorted((e.output_index, e.item.type) for e in events if e.type == "response.output_item.done")
        assert events[-1].type == "response.completed"
        output = events[-1].response.output
        assert [item_type for _, item_type in done] == [item.type for item in output]
    else:
        output = client.responses.create(**request).output
    calls = [item for item in output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather"
    # A new call of the provider's own: its id is not the transcript's old one.
    assert calls[0].call_id and calls[0].call_id != SEED_CALL_ID
    assert_repaired_and_accepted(providers[name])
