"""What the agent tests need of the emulator's script: ``CALL_TOOL <name> {json}`` makes a call
with those arguments, streamed in each API's wire format as the official SDKs parse it, and a
system message after the user's turn (Claude Code's, aider's) does not hide that turn.

No agent runs here: these are the emulator's own answers, read by the openai and anthropic SDKs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.emulator.script import decide_reply, last_user_text
from tests._support.servers import running_server

ARGS = {"command": "echo suture-ok > out.txt", "nested": {"list": [1, "two"]}}
SAY = f"Please. CALL_TOOL Bash {json.dumps(ARGS)} and then stop"
TOOL_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"command": {"type": "string"}}}


@pytest.fixture(scope="module")
def emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as url:
        yield url


def test_arguments_follow_the_name() -> None:
    reply = decide_reply(SAY)
    assert (reply.tool_name, json.loads(reply.arguments), reply.input) == ("Bash", ARGS, ARGS)
    assert decide_reply("CALL_TOOL get_weather").arguments == "{}"
    assert decide_reply("CALL_TOOL get_weather\n{not for the call}").arguments == "{}"
    broken = decide_reply('CALL_TOOL Bash {"command": ')
    assert broken.tool_name is None and "not JSON" in broken.text


def test_a_system_message_after_the_user_turn_is_not_a_turn() -> None:
    parts = frozenset({"text"})
    user = {"role": "user", "content": [{"type": "text", "text": SAY}]}
    assert last_user_text([user, {"role": "system", "content": "Available agent types..."}], parts) == SAY
    assert last_user_text([user, {"role": "developer", "content": "reminder"}], parts) == SAY
    answered = [user, {"role": "assistant", "content": "ok"}, {"role": "system", "content": "reminder"}]
    assert last_user_text(answered, parts) is None


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_messages(emulator: str, stream: bool) -> None:
    client = anthropic.Anthropic(base_url=emulator, api_key="sk-ant-test", max_retries=0)
    request: Any = {
        "model": "claude-opus-4-8",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": SAY}],
        "tools": [{"name": "Bash", "input_schema": TOOL_SCHEMA}],
    }
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    (call,) = [block for block in message.content if block.type == "tool_use"]
    assert (call.name, call.input, message.stop_reason) == ("Bash", ARGS, "tool_use")


def test_openai_chat_stream(emulator: str) -> None:
    client = openai.OpenAI(base_url=emulator + "/v1", api_key="sk-test", max_retries=0)
    with client.chat.completions.stream(
        model="gpt-4.1",
        messages=[{"role": "user", "content": SAY}],
        tools=[{"type": "function", "function": {"name": "Bash", "parameters": TOOL_SCHEMA}}],
    ) as events:
        completion = events.get_final_completion()
    (call,) = completion.choices[0].message.tool_calls or []
    assert call.type == "function"
    assert (call.function.name, json.loads(call.function.arguments)) == ("Bash", ARGS)


def test_openai_responses_stream(emulator: str) -> None:
    client = openai.OpenAI(base_url=emulator + "/v1", api_key="sk-test", max_retries=0)
    with client.responses.stream(
        model="gpt-4.1",
        input=SAY,
        tools=[{"type": "function", "name": "Bash", "parameters": TOOL_SCHEMA, "strict": False}],
    ) as events:
        response = events.get_final_response()
    (call,) = [item for item in response.output if item.type == "function_call"]
    assert (call.name, json.loads(call.arguments)) == ("Bash", ARGS)
