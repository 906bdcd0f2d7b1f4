"""Anthropic repairs end to end: the official SDK -> the strict emulator (400) -> and through Suture (200).

One class of transcript defect per test (issue 14): the body as an agent sends it is answered
with the provider's exact 400 when it goes straight to the emulator, and with 200 when Suture
sits in front of the same emulator; the emulator's log shows what Suture forwarded.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

KEY = "sk-ant-canary-0123456789"
MODEL = "claude-haiku-4-5"
TOOLS = [{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}]
THINKING = {"type": "enabled", "budget_tokens": 1024}
THINK = {"type": "thinking", "thinking": "Call the weather tool.", "signature": "EqQBCkgIARABGAIiQL4s"}
THINK_AGAIN = {"type": "thinking", "thinking": "Now Rome.", "signature": "EqQBCkgIARABGAIiQM7z"}
A1 = (
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)


def tool_use(call_id: str, arguments: Any = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "get_weather",
        "input": {"city": "Paris"} if arguments is None else arguments,
    }


def tool_result(call_id: str, text: str = "Sunny") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def client(self, *, direct: bool = False) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.emulator if direct else self.suture, api_key=KEY, max_retries=0, timeout=10
        )

    def last_forwarded(self) -> dict[str, Any]:
        lines = [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]
        got = [e for e in lines if "event" not in e][-1]
        assert got["status"] == 200, got
        body: dict[str, Any] = got["body"]
        return body

    def rejected(self, body: dict[str, Any]) -> str:
        """The emulator's 400 for ``body`` sent straight to it."""
        with self.client(direct=True) as direct, pytest.raises(anthropic.BadRequestError) as info:
            direct.messages.create(**body)
        assert info.value.status_code == 400
        message: str = info.value.body["error"]["message"]  # type: ignore[index]
        return message

    def accepted(self, body: dict[str, Any], *, stream: bool = False) -> tuple[int, dict[str, Any]]:
        """Suture's answer to ``body``: the number of repairs it made, and what it forwarded."""
        with self.client() as client:
            if stream:
                with client.messages.stream(**body) as events:
                    assert events.get_final_text()
                    repairs = int(events.response.headers["x-suture-repairs"])
            else:
                raw = client.messages.with_raw_response.create(**body)
                assert raw.status_code == 200
                assert raw.parse().content
                repairs = int(raw.headers["x-suture-repairs"])
        return repairs, self.last_forwarded()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    record = tmp_path_factory.mktemp("anthropic-repairs") / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="anthropic", record_path=record))
    with contextlib.ExitStack() as stack:
        emulator = stack.enter_context(running_server(app, timeout_graceful_shutdown=1))
        # No retry after a refusal: each repair here must be made before the request is sent.
        url = stack.enter_context(suture(anthropic={"upstream": emulator, "rejection_repair": {"enabled": False}}))
        yield Stack(emulator, record, url)


def kinds(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return ["string"] if isinstance(content, str) else [block["type"] for block in content]


# --- Removing empty content never leaves `messages: []` --------------------------------------


def test_a_conversation_of_blank_messages_keeps_a_placeholder(stack: Stack) -> None:
    body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": " \n"}]}
    assert stack.rejected(body) == "messages: text content blocks must contain non-whitespace text"
    # What removing the blank message alone would forward.
    assert stack.rejected({**body, "messages": []}) == "messages: at least one message is required"

    repairs, forwarded = stack.accepted(body)
    assert repairs == 3  # blank text dropped, empty message removed, placeholder added
    [message] = forwarded["messages"]
    assert message["role"] == "user"
    assert message["content"][0]["text"].strip()


def test_whitespace_next_to_text_that_says_something_passes_untouched(stack: Stack) -> None:
    # Anthropic takes it (LibreChat-AI/agents PR#124); a client may put it there on purpose.
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "\n"}, {"type": "text", "text": "What's up?"}]},
        ],
    }
    repairs, forwarded = stack.accepted(body)
    assert repairs == 0
    assert forwarded["messages"] == body["messages"]


# --- A final assistant message ending in whitespace -------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_final_assistant_trailing_whitespace_is_trimmed(stack: Stack, stream: bool) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "Continue the story."},
            {"role": "assistant", "content": [{"type": "text", "text": "Once upon a time\n"}]},
        ],
    }
    assert stack.rejected(body) == "messages: final assistant content cannot end with trailing whitespace"

    repairs, forwarded = stack.accepted(body, stream=stream)
    assert repairs == 1
    assert forwarded["messages"][-1]["content"] == [{"type": "text", "text": "Once upon a time"}]


# --- Prefill on a model that refuses it --------------------------------------------------------


def test_prefill_is_dropped_for_a_model_that_refuses_it(stack: Stack) -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Summarise the file."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "The file defines"}]},
        ],
    }
    assert stack.rejected(body) == (
        "This model does not support assistant message prefill. The conversation must end with a user message."
    )

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert [m["role"] for m in forwarded["messages"]] == ["user"]


def test_prefill_on_a_model_that_takes_it_passes_untouched(stack: Stack) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "JSON please"}, {"role": "assistant", "content": "{"}],
    }
    repairs, forwarded = stack.accepted(body)
    assert repairs == 0
    assert forwarded["messages"] == body["messages"]


# --- Text after a tool_use in the same assistant message ---------------------------------------


def test_text_after_tool_use_is_moved_before_it(stack: Stack) -> None:
    # The recorded rejection (opencode's cassette): the API names messages.1, the message after the turn.
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": TOOLS,
        "messages": [
            {
                "role": "assistant",
                "content": [tool_use("call_1"), {"type": "text", "text": "I will check the weather."}],
            },
            {"role": "user", "content": [tool_result("call_1", '{"temperature":"72F"}')]},
            {"role": "user", "content": [{"type": "text", "text": "Use that result to answer briefly."}]},
        ],
    }
    assert stack.rejected(body) == A1.format(n=1, ids="call_1")

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert kinds(forwarded["messages"][0]) == ["text", "tool_use"]


# --- Thinking stays first when repairs merge or reorder ---------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_recovery_message_moved_after_a_late_result_keeps_thinking_first(stack: Stack, stream: bool) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 2048,
        "thinking": THINKING,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Weather in Paris, then Rome?"},
            {"role": "assistant", "content": [THINK, tool_use("toolu_01Paris")]},
            {"role": "assistant", "content": "I noticed that you have interrupted me. What can I do for you?"},
            {"role": "user", "content": [tool_result("toolu_01Paris")]},
            {"role": "assistant", "content": [THINK_AGAIN, tool_use("toolu_01Rome", {"city": "Rome"})]},
            {"role": "user", "content": [tool_result("toolu_01Rome", "Cloudy")]},
        ],
    }
    # The recovery message merges into the call's turn, after the call: the error names the result's message.
    assert stack.rejected(body) == A1.format(n=3, ids="toolu_01Paris")

    repairs, forwarded = stack.accepted(body, stream=stream)
    assert repairs == 2  # moved after the result, then merged behind the next turn's thinking
    messages = forwarded["messages"]
    assert [kinds(m) for m in messages[1:]] == [
        ["thinking", "tool_use"],
        ["tool_result"],
        ["thinking", "text", "tool_use"],
        ["tool_result"],
    ]
    # Thinking blocks reach the provider exactly as the client sent them.
    assert messages[1]["content"][0] == THINK
    assert messages[3]["content"][0] == THINK_AGAIN


def test_redacted_thinking_after_tool_use_moves_ahead_of_it(stack: Stack) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    body = {
        "model": MODEL,
        "max_tokens": 2048,
        "thinking": THINKING,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "load the skill"}]},
            {"role": "assistant", "content": [tool_use("call_abc"), redacted]},
            {"role": "user", "content": [tool_result("call_abc", "(skill contents)")]},
        ],
    }
    assert stack.rejected(body) == A1.format(n=2, ids="call_abc")

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["messages"][1]["content"] == [redacted, tool_use("call_abc")]


# --- Thinking without its signature -------------------------------------------------------------


@pytest.mark.parametrize(
    ("unsigned", "error"),
    [
        (
            {"type": "thinking", "thinking": "The user greets me."},
            "messages.1.content.0.thinking.signature: Field required",
        ),
        (
            {"type": "thinking", "thinking": "The user greets me.", "signature": ""},
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
    ],
    ids=["missing", "empty"],
)
def test_a_thinking_block_without_a_signature_is_removed(stack: Stack, unsigned: dict[str, Any], error: str) -> None:
    # A gateway turned a Chat turn's reasoning into a thinking block it could not sign
    # (lbjlaq/Antigravity-Manager#1650), or a stream was cut before the signature came.
    answer = {"type": "text", "text": "Hello! How can I help?"}
    body = {
        "model": MODEL,
        "max_tokens": 2048,
        "thinking": THINKING,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [unsigned, answer]},
            {"role": "user", "content": "What is the weather in Paris?"},
        ],
    }
    assert stack.rejected(body) == error

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["messages"][1] == {"role": "assistant", "content": [answer]}
    assert forwarded["messages"][2] == body["messages"][2]


# --- tool_use.input that is not an object -------------------------------------------------------


def test_tool_input_that_is_not_an_object_is_replaced(stack: Stack) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [tool_use("toolu_01Cut", '{"city": "Par')]},
            {"role": "user", "content": [tool_result("toolu_01Cut", "Error: 1: 1")]},
        ],
    }
    assert stack.rejected(body) == "messages.1.content.0.tool_use.input: Input should be a valid dictionary"

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["messages"][1]["content"][0]["input"] == {}


# --- A tool defined twice ---------------------------------------------------------------------


def test_a_tool_defined_twice_word_for_word_is_sent_once(stack: Stack) -> None:
    ls = {"name": "ls", "description": "List a directory.", "input_schema": {"type": "object"}}
    read = {"name": "read", "description": "Read a file.", "input_schema": {"type": "object"}}
    body = {"model": MODEL, "max_tokens": 64, "tools": [ls, read, ls], "messages": [{"role": "user", "content": "hi"}]}
    assert stack.rejected(body) == "tools: Tool names must be unique."
    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["tools"] == [ls, read]


# --- A system message inside messages ----------------------------------------------------------


def test_a_system_message_in_messages_moves_to_the_top_level_system(stack: Stack) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "system": "You are a weather agent.",
        "messages": [
            {"role": "system", "content": "Answer in French."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
    }
    # The model takes no system message inside messages (Claude Haiku 4.5; Opus 4.8 would).
    assert stack.rejected(body) == "role 'system' is not supported on this model"

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["system"] == "You are a weather agent.\n\nAnswer in French."
    assert forwarded["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


# --- A blank block in the top-level system ------------------------------------------------------


def test_a_whitespace_only_system_block_is_dropped(stack: Stack) -> None:
    # opencode's system prompt assembled from parts, one of them only whitespace (anomalyco/opencode#35101).
    prompt = {"type": "text", "text": "You are a weather agent."}
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "system": [prompt, {"type": "text", "text": "\n \t\n"}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    assert stack.rejected(body) == "system: text content blocks must contain non-whitespace text"

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["system"] == [prompt]
    assert forwarded["messages"] == body["messages"]


def test_an_empty_system_string_is_removed(stack: Stack) -> None:
    body = {"model": MODEL, "max_tokens": 64, "system": "", "messages": [{"role": "user", "content": "hi"}]}
    assert stack.rejected(body) == "system: text content blocks must be non-empty"

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert "system" not in forwarded


# --- A server tool's result with no server_tool_use before it ----------------------------------


def test_a_server_tool_result_without_its_call_is_folded_into_text(stack: Stack) -> None:
    advice = {
        "type": "advisor_tool_result",
        "tool_use_id": "srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc",
        "content": {"type": "advisor_result", "text": "Check the forecast for tomorrow too."},
    }
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [advice, {"type": "text", "text": "It is sunny."}]},
            {"role": "user", "content": "And tomorrow?"},
        ],
    }
    assert stack.rejected(body) == (
        "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
        "srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc. Each `advisor_tool_result` block must have a corresponding "
        "`server_tool_use` block before it."
    )

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert kinds(forwarded["messages"][1]) == ["text", "text"]
    assert "Check the forecast for tomorrow too." in forwarded["messages"][1]["content"][0]["text"]


# --- A server tool's id that is not Anthropic's -------------------------------------------------


def test_a_server_tool_use_id_from_another_channel_gets_anthropic_s_prefix(stack: Stack) -> None:
    # A relay mixing upstream channels left a web search with its own id (ding113/claude-code-hub#470).
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}],
        "messages": [
            {"role": "user", "content": "Who won yesterday?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me search."},
                    {"type": "server_tool_use", "id": "ws_0c1f-2e3d", "name": "web_search", "input": {"query": "q"}},
                    {"type": "web_search_tool_result", "tool_use_id": "ws_0c1f-2e3d", "content": []},
                    {"type": "text", "text": "The home side won."},
                ],
            },
            {"role": "user", "content": "And the day before?"},
        ],
    }
    assert stack.rejected(body) == (
        "messages.1.content.1.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
    )

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    call, result = forwarded["messages"][1]["content"][1:3]
    assert call["id"] == result["tool_use_id"] == "srvtoolu_ws_0c1f_2e3d"


# --- A final assistant message Anthropic refuses for its thinking ------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_final_assistant_message_ending_in_thinking_is_continued(stack: Stack, stream: bool) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 2048,
        "thinking": THINKING,
        "messages": [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": [THINK]}],
    }
    assert stack.rejected(body) == "The final block in an assistant message cannot be `thinking`."

    repairs, forwarded = stack.accepted(body, stream=stream)
    assert repairs == 1
    assert forwarded["messages"][1] == {"role": "assistant", "content": [THINK]}
    assert forwarded["messages"][2]["role"] == "user"


def test_thinking_in_the_final_message_with_thinking_disabled_is_continued(stack: Stack) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [THINK, {"type": "text", "text": "Let me check"}]},
        ],
    }
    assert stack.rejected(body) == (
        "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`."
    )

    repairs, forwarded = stack.accepted(body)
    assert repairs == 1
    assert forwarded["messages"][:2] == body["messages"]
    assert [m["role"] for m in forwarded["messages"]] == ["user", "assistant", "user"]


# --- An image whose bytes are another type than its label --------------------------------------

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_image_labelled_with_another_type_than_its_bytes_is_relabelled(stack: Stack, stream: bool) -> None:
    screenshot = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG_1X1}}
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [tool_use("toolu_01Shot", {"city": "Paris"})]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01Shot",
                        "content": [{"type": "text", "text": "map"}, screenshot],
                    }
                ],
            },
        ],
    }
    assert stack.rejected(body) == (
        "messages.2.content.0.tool_result.content.1.image.source.base64: The image was specified using the "
        "image/jpeg media type, but the image appears to be a image/png image"
    )

    repairs, forwarded = stack.accepted(body, stream=stream)
    assert repairs == 1
    image = forwarded["messages"][2]["content"][0]["content"][1]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1X1}}
