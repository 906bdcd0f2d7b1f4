"""OpenAI Chat and the OpenAI-compatible providers, end to end: openai SDK -> Suture -> strict emulator.

For each class of broken transcript (null content, a tool message without its id, DeepSeek's
reasoner, vLLM's chat templates, Groq's string-only roles and message keys, Kimi's and DeepSeek's
reasoning_content, OpenRouter's upstreams, Azure's and MiniMax's texts, ids over OpenAI's 40
characters, a legacy function call without arguments, arguments sent as an object, arguments
MiniMax cannot parse, DeepSeek's string-only assistant content, a function message without its
name), the body is sent with the
official openai SDK straight to the emulator, which answers the provider's own 400, and then
through a real Suture in front of the same emulator, which repairs it so the answer is a 200.

The emulator serves each compatible provider under its name (``/deepseek/v1``...); Suture reaches
it through ``upstreams`` that name the provider, routed by model name as a deployment would.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

KEY = "sk-openai-compatible-test-0123456789"
UPSTREAMS = ("azure", "deepseek", "groq", "moonshot", "minimax", "openrouter", "vllm")
# First match wins: OpenRouter's slugs before vLLM's Hugging Face names that share a prefix.
ROUTES = (
    ("anthropic/*", "openrouter"),
    ("deepseek/*", "openrouter"),
    ("mistralai/devstral-*", "openrouter"),
    ("mistralai/*", "vllm"),
    ("google/gemma-*", "vllm"),
    ("meta-llama/*", "vllm"),
    ("deepseek-*", "deepseek"),
    ("kimi-*", "moonshot"),
    ("llama-*", "groq"),
    ("qwen-*", "groq"),
    ("MiniMax-*", "minimax"),
    ("azure-*", "azure"),
)
TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]


def call(ident: str, name: str = "search", arguments: str = "{}") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class Stack:
    emulator: str
    suture: str
    record: Path

    def client(self, *, direct: bool) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=(self.emulator if direct else self.suture) + "/v1", api_key=KEY, max_retries=0, timeout=10
        )

    def direct_client(self, upstream: str | None) -> openai.OpenAI:
        """The SDK pointed at the emulator as that provider: its own base URL."""
        base = f"{self.emulator}/{upstream}/v1" if upstream else f"{self.emulator}/v1"
        return openai.OpenAI(base_url=base, api_key=KEY, max_retries=0, timeout=10)

    def forwarded(self) -> list[dict[str, Any]]:
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, lines) if "event" not in e]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    record = tmp_path_factory.mktemp("emulator") / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app, timeout_graceful_shutdown=1) as emulator:
        upstreams = {
            name: {
                "protocol": "openai",
                "base_url": f"{emulator}/{name}/v1",
                "provider": name,
                # No retry after a refusal: each repair here must be made before the request is sent.
                "rejection_repair": {"enabled": False},
            }
            for name in UPSTREAMS
        }
        routes = [{"match": match, "upstream": upstream} for match, upstream in ROUTES]
        with suture(
            openai={"upstream": emulator + "/v1", "rejection_repair": {"enabled": False}},
            upstreams=upstreams,
            routes=routes,
        ) as url:
            yield Stack(emulator, url, record)


@dataclass(frozen=True)
class Broken:
    """A broken request: where it is bound, the body, and the text its provider answers."""

    name: str
    upstream: str | None  # the emulator's provider path; None for OpenAI itself
    body: dict[str, Any]
    message: str


DEEPSEEK_D5 = (
    "The last message of deepseek-reasoner must be a user message, or an assistant message with prefix mode on "
    "(refer to https://api-docs.deepseek.com/guides/chat_prefix_completion)."
)

CASES = [
    # content: null (OA002)
    Broken(
        "assistant-null-content",
        None,
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "user", "content": "first prompt"},
                {"role": "assistant", "content": None},
                {"role": "user", "content": "next prompt"},
            ],
        },
        "Invalid value for 'content': expected a string, got null.",
    ),
    Broken(
        "tool-null-content",
        None,
        {
            "model": "gpt-4o",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "what do the docs say?"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_r1")]},
                {"role": "tool", "tool_call_id": "call_r1", "content": None},
            ],
        },
        "Invalid value for 'content': expected a string, got null.",
    ),
    # A tool message without tool_call_id (OA003, else kept as text by TP004)
    Broken(
        "tool-message-without-id",
        None,
        {
            "model": "gpt-4o",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "search"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_s1")]},
                {"role": "tool", "content": "three hits"},
            ],
        },
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
    ),
    Broken(
        "groq-tool-message-without-id",
        "groq",
        {
            "model": "llama-3.3-70b-versatile",
            "messages": [
                {"role": "system", "content": "app system prompt"},
                {"role": "user", "content": "news?"},
                {"role": "assistant", "content": ""},
                {"role": "tool", "content": "Rover finds signs of ancient life on Mars."},
            ],
        },
        "'messages.3' : for 'role:tool' the following must be satisfied"
        "[('messages.3.tool_call_id' : property 'tool_call_id' is missing)]",
    ),
    # DeepSeek's reasoner (PV004, PV006, PV007)
    Broken(
        "deepseek-successive-users",
        "deepseek",
        {
            "model": "deepseek-reasoner",
            "messages": [
                {"role": "user", "content": "first question"},
                {"role": "assistant", "content": "first answer"},
                {"role": "user", "content": "question whose answer was stopped"},
                {"role": "user", "content": "new question"},
            ],
        },
        "deepseek-reasoner does not support successive user or assistant messages (messages[2] and messages[3] in "
        "your input). You should interleave the user/assistant messages in the message sequence.",
    ),
    Broken(
        "deepseek-system-after-assistant",
        "deepseek",
        {
            "model": "deepseek-reasoner",
            "messages": [
                {"role": "user", "content": "prompt"},
                {"role": "assistant", "content": "cached earlier answer"},
                {"role": "system", "content": "You are a professional assistant."},
            ],
        },
        DEEPSEEK_D5,
    ),
    Broken(
        "deepseek-final-assistant",
        "deepseek",
        {
            "model": "deepseek-reasoner",
            "messages": [
                {"role": "system", "content": "system prompt of the node"},
                {"role": "user", "content": "user prompt of the node"},
                {"role": "assistant", "content": "assistant prompt of the node"},
            ],
        },
        DEEPSEEK_D5,
    ),
    Broken(
        "deepseek-tool-turn-without-reasoning",
        "deepseek",
        {
            "model": "deepseek-reasoner",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "question about the repository"},
                {"role": "assistant", "content": "", "tool_calls": [call("call_00_graph")]},
                {"role": "tool", "tool_call_id": "call_00_graph", "content": "graph query result"},
            ],
        },
        "Missing `reasoning_content` field in the assistant message at message index 1. For more information, "
        "please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    ),
    # DeepSeek takes an assistant message's content only as a string (PV008); serde's column is
    # where its parser stood: the comma after messages[1] of the compact body the SDK sends,
    # {"model":"deepseek-chat","messages":[...
    Broken(
        "deepseek-assistant-content-empty-list",
        "deepseek",
        {
            "model": "deepseek-chat",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "weather in New York?"},
                {"role": "assistant", "content": [], "tool_calls": [call("call_0_weather")]},
                {"role": "tool", "tool_call_id": "call_0_weather", "content": "sunny"},
            ],
        },
        "Failed to deserialize the JSON body into the target type: messages[1]: invalid type: sequence, "
        "expected a string at line 1 column 223",
    ),
    # vLLM's chat templates (PV005)
    Broken(
        "vllm-two-users",
        "vllm",
        {
            "model": "mistralai/Mistral-7B-Instruct-v0.3",
            "messages": [
                {"role": "system", "content": "you are wikipedia agent."},
                {"role": "user", "content": "whta is the capital city of ontario ?"},
                {"role": "user", "content": "and tell me about its history."},
            ],
        },
        "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
    ),
    Broken(
        "vllm-second-system",
        "vllm",
        {
            "model": "google/gemma-3-27b-it",
            "messages": [
                {"role": "system", "content": "assistant system prompt"},
                {"role": "system", "content": "second system prompt"},
                {"role": "user", "content": "question"},
            ],
        },
        "Conversation roles must alternate user/assistant/user/assistant/...",
    ),
    Broken(
        "vllm-mistral-common-user-after-tool",
        "vllm",
        {
            "model": "mistralai/Mistral-Small-4-119B-2603",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "Run the unit tests"},
                {"role": "assistant", "content": None, "tool_calls": [call("bR7sK2pQ9")]},
                {"role": "tool", "tool_call_id": "bR7sK2pQ9", "content": "Skipped: User cancelled the operation."},
                {"role": "user", "content": "Run the unit tests"},
            ],
        },
        "Unexpected role 'user' after role 'tool'",
    ),
    # Groq's string-only system and tool content (PV008)
    Broken(
        "groq-system-parts",
        "groq",
        {
            "model": "llama-3.1-70b-versatile",
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "You are OpenHands."}]},
                {"role": "user", "content": [{"type": "text", "text": "the task"}]},
            ],
        },
        "'messages.0' : for 'role:system' the following must be satisfied"
        "[('messages.0.content' : value must be a string)]",
    ),
    # Groq's schema takes no key it does not list (PV009)
    Broken(
        "groq-message-timestamp",
        "groq",
        {
            "model": "llama-3.3-70b-versatile",
            "messages": [{"role": "user", "content": "the task", "timestamp": 1769400000}],
        },
        "'messages.0' : for 'role:user' the following must be satisfied"
        "[('messages.0' : property 'timestamp' is unsupported)]",
    ),
    # Kimi thinks by default (PV007)
    Broken(
        "moonshot-kimi-k25-reasoning",
        "moonshot",
        {
            "model": "kimi-k2.5",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "weather in Paris?"},
                {"role": "assistant", "content": "", "tool_calls": [call("functions.search:0")]},
                {"role": "tool", "tool_call_id": "functions.search:0", "content": "sunny"},
            ],
        },
        "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
    ),
    # OpenRouter: the upstream's own rules, chosen from the model's prefix
    Broken(
        "openrouter-anthropic-empty-message",
        "openrouter",
        {
            "model": "anthropic/claude-sonnet-4.5",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": ""},
                {"role": "user", "content": "are you there?"},
            ],
        },
        "messages.1: all messages must have non-empty content except for the optional final assistant message",
    ),
    Broken(
        "openrouter-mistral-tool-after-user",
        "openrouter",
        {
            "model": "mistralai/devstral-medium",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "run the tests"},
                {"role": "assistant", "content": None, "tool_calls": [call("Xy7Wv3Ts1")]},
                {"role": "user", "content": "message typed after cancelling"},
                {"role": "tool", "tool_call_id": "Xy7Wv3Ts1", "content": "Tool call was cancelled by the user."},
            ],
        },
        "Unexpected role 'tool' after role 'user'",
    ),
    Broken(
        "openrouter-deepseek-reasoning",
        "openrouter",
        {
            "model": "deepseek/deepseek-v4-pro",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "run it"},
                {"role": "assistant", "content": "", "tool_calls": [call("call_00_exec")]},
                {"role": "tool", "tool_call_id": "call_00_exec", "content": "1"},
            ],
        },
        "The `reasoning_content` in the thinking mode must be passed back to the API.",
    ),
    # Azure's current spelling, MiniMax's own text (TP004 repairs both)
    Broken(
        "azure-orphan-tool",
        "azure",
        {
            "model": "azure-gpt-4o",
            "messages": [
                {"role": "user", "content": "ask the plugin"},
                {"role": "tool", "tool_call_id": "call_steam_1", "content": "plugin result", "name": "steam"},
                {"role": "user", "content": "follow-up"},
            ],
        },
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    ),
    # An id over OpenAI's and Azure's 40 characters, one a gateway made up (PV001)
    Broken(
        "azure-tool-call-id-over-40",
        "azure",
        {
            "model": "azure-gpt-4o",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "look it up"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("portkey-6aa6db90-1b84-4155-9f32-f658c97d6b1b")],
                },
                {"role": "tool", "tool_call_id": "portkey-6aa6db90-1b84-4155-9f32-f658c97d6b1b", "content": "found"},
            ],
        },
        "Invalid 'messages[1].tool_calls[0].id': string too long. "
        "Expected a string with maximum length 40, but got a string with length 44 instead.",
    ),
    # A legacy function message without its name, and no call to take it from (OA005)
    Broken(
        "function-message-without-name",
        None,
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are a helpful AI assistant."},
                {"role": "user", "content": "How do I enrol?"},
                {"role": "function", "content": "Enrolment opens in May."},
            ],
        },
        "Missing parameter 'name': messages with role 'function' must have a 'name'.",
    ),
    # A legacy function call without its arguments (OA004)
    Broken(
        "azure-function-call-without-arguments",
        "azure",
        {
            "model": "azure-gpt-4o",
            "messages": [
                {"role": "user", "content": "What is the weather in Copenhagen?"},
                {"role": "assistant", "function_call": {"name": "get_weather"}},
                {"role": "function", "name": "get_weather", "content": "12 degrees and windy"},
            ],
            "functions": [{"name": "get_weather", "parameters": {"type": "object"}}],
        },
        "Missing required parameter: 'messages[1].function_call.arguments'.",
    ),
    # A tool call's arguments replayed as an object, not their JSON text (OA006)
    Broken(
        "openai-tool-arguments-as-object",
        None,
        {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "You are a phone assistant."},
                {"role": "user", "content": "Open the calendar."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "search", "arguments": {"query": "calendar"}},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "opened"},
                {"role": "user", "content": "Thanks."},
            ],
            "tools": TOOLS,
        },
        "Invalid type for 'messages[2].tool_calls[0].function.arguments': expected a string, but got an object instead.",
    ),
    # A participant's name as a user typed it (OA008; FlowiseAI/Flowise#2948)
    Broken(
        "openai-participant-name-with-space",
        None,
        {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are the shop's support agent."},
                {"role": "user", "name": "Paulo Seze", "content": "Where is my lamp?"},
            ],
        },
        "Invalid 'messages[1].name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
    ),
    # A call in the history named with a dot, as the model made it up (OA008; mcp-use/mcp-use#90)
    Broken(
        "azure-history-call-name-with-dot",
        "azure",
        {
            "model": "azure-gpt-4o",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "What is the request rate?"},
                {"role": "assistant", "content": None, "tool_calls": [call("call_7", name="prometheus.execute_query")]},
                {"role": "tool", "tool_call_id": "call_7", "content": "prometheus.execute_query is not a valid tool"},
            ],
        },
        "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
    ),
    Broken(
        "minimax-result-id-not-found",
        "minimax",
        {
            "model": "MiniMax-M2.1",
            "messages": [
                {"role": "user", "content": "search Google"},
                {"role": "assistant", "content": "assistant reply"},
                {"role": "tool", "tool_call_id": "call_function_g094w5htkglv_1", "content": "search results"},
                {"role": "user", "content": "follow-up"},
            ],
        },
        "invalid params, tool result's tool id(call_function_g094w5htkglv_1) not found (2013)",
    ),
    # Arguments encoded twice, which MiniMax cannot parse (PV010)
    Broken(
        "minimax-double-encoded-arguments",
        "minimax",
        {
            "model": "MiniMax-M2.5",
            "tools": TOOLS,
            "messages": [
                {"role": "user", "content": "search the docs"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("Dyx3YtQx5", arguments='"{\\"q\\": \\"docs\\"}"')],
                },
                {"role": "tool", "tool_call_id": "Dyx3YtQx5", "content": "three hits"},
            ],
        },
        "invalid params, invalid function arguments json string, tool_call_id: Dyx3YtQx5 (2013)",
    ),
]


def provider_message(error: openai.APIStatusError) -> str:
    """The provider's own text in the error body; OpenRouter carries the upstream's body as a string."""
    envelope = error.response.json()
    raw = envelope["error"].get("metadata", {}).get("raw")
    if raw is None:
        return str(envelope["error"]["message"])
    inner = json.loads(raw)
    # Anthropic and OpenAI-style bodies nest the message in "error"; Mistral's is flat.
    return str(inner["error"]["message"] if "error" in inner else inner["message"])


def create(client: openai.OpenAI, body: dict[str, Any], **options: Any) -> Any:
    known = {k: body[k] for k in ("model", "messages", "tools") if k in body}
    extra = {k: v for k, v in body.items() if k not in known}
    return client.chat.completions.with_raw_response.create(**known, extra_body=extra or None, **options)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_rejected_as_sent_and_answered_through_suture(stack: Stack, case: Broken) -> None:
    with stack.direct_client(case.upstream) as direct, pytest.raises(openai.BadRequestError) as rejected:
        create(direct, case.body)
    assert rejected.value.status_code == 400
    assert provider_message(rejected.value) == case.message

    with stack.client(direct=False) as client:
        raw = create(client, case.body)
    assert raw.status_code == 200
    assert raw.headers["x-suture-repairs"] != "0"
    assert raw.parse().choices[0].message.content.startswith("Emulated reply.")
    forwarded = stack.forwarded()[-1]
    path = f"/{case.upstream}/v1/chat/completions" if case.upstream else "/v1/chat/completions"
    assert (forwarded["path"], forwarded["status"]) == (path, 200)


def test_a_repaired_stream_is_answered_too(stack: Stack) -> None:
    (case,) = [c for c in CASES if c.name == "deepseek-successive-users"]
    with stack.client(direct=False) as client:
        chunks = client.chat.completions.create(model=case.body["model"], messages=case.body["messages"], stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Emulated reply.")
    forwarded = stack.forwarded()[-1]["body"]["messages"]
    assert [m["role"] for m in forwarded] == ["user", "assistant", "user"]
    assert forwarded[2]["content"] == "question whose answer was stopped\n\nnew question"


# Valid bodies that a provider's own rules look at (a thinking model's reasoning_content, a tool
# message, the plainest role order): no repair, and the provider gets the client's bytes.
VALID = [
    (
        "deepseek-v4-with-reasoning",
        "deepseek",
        {
            "model": "deepseek-v4-pro",
            "messages": [
                {"role": "user", "content": "find it"},
                {"role": "assistant", "content": "", "reasoning_content": "search first", "tool_calls": [call("c1")]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"},
                {"role": "user", "content": "thanks"},
            ],
            "tools": TOOLS,
        },
    ),
    (
        "kimi-k2.5-with-reasoning",
        "moonshot",
        {
            "model": "kimi-k2.5",
            "messages": [
                {"role": "user", "content": "find it"},
                {"role": "assistant", "content": "", "reasoning_content": " ", "tool_calls": [call("c1")]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"},
                {"role": "user", "content": "thanks"},
            ],
            "tools": TOOLS,
        },
    ),
    (
        "groq-string-tool-content",
        "groq",
        {
            "model": "llama-3.3-70b-versatile",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "find it"},
                {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"},
                {"role": "user", "content": "thanks"},
            ],
            "tools": TOOLS,
        },
    ),
    (
        "vllm-plain-order",
        "vllm",
        {
            "model": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi"},
                {"role": "user", "content": "thanks"},
            ],
        },
    ),
]


@pytest.mark.parametrize(("name", "upstream", "body"), VALID, ids=[v[0] for v in VALID])
def test_a_valid_body_reaches_its_provider_byte_for_byte(
    stack: Stack, name: str, upstream: str, body: dict[str, Any]
) -> None:
    raw = json.dumps(body, separators=(",", ":")).encode()
    answer = httpx.post(
        f"{stack.suture}/v1/chat/completions",
        content=raw,
        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-suture-repairs"] == "0"
    forwarded = stack.forwarded()[-1]
    assert forwarded["path"] == f"/{upstream}/v1/chat/completions"
    assert forwarded["raw_sha256"] == hashlib.sha256(raw).hexdigest()


def test_an_azure_responses_request_gets_azure_s_rules(stack: Stack) -> None:
    """A stateless Responses replay (Codex CLI, store false) routed to Azure: the reasoning item
    without its id, which OpenAI takes and Azure refuses, is removed (RS008); the answer stays."""
    body = {
        "model": "azure-gpt-5",
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-opaque"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hey!"}]},
            {"type": "message", "role": "user", "content": "what can you do?"},
        ],
    }
    with stack.direct_client("azure") as direct, pytest.raises(openai.BadRequestError) as rejected:
        direct.responses.create(**body)
    assert provider_message(rejected.value) == "Missing required parameter: 'input[1].id'."

    sent_before = len(stack.forwarded())
    with stack.client(direct=False) as client:
        raw = client.responses.with_raw_response.create(**body)
    assert raw.headers["x-suture-repairs"] == "1"
    # Repaired before it was sent, by Azure's own rules (RS008), not after Azure refused it.
    assert "x-suture-retried" not in raw.headers
    assert len(stack.forwarded()) == sent_before + 1
    assert raw.parse().output_text.startswith("Emulated reply.")
    forwarded = stack.forwarded()[-1]
    assert forwarded["path"] == "/azure/v1/responses"
    assert [item["type"] for item in forwarded["body"]["input"]] == ["message", "message", "message"]
    assert forwarded["body"]["input"][1]["content"][0]["text"] == "Hey!"
