"""The seed scenario the litellm routing tests send: the user asks, the model calls a tool, the
user interrupts before any result (in Chat, Messages and Responses shape); and the check that a
provider received it repaired and accepted it."""

from __future__ import annotations

from typing import Any

from sanitizer import validate
from tests._support.litellm_routes import PROVIDERS, Provider

INTERRUPTED = "I noticed that you have interrupted me. What can I do for you?"
SEED_CALL_ID = "call_seed0001"
TOOLS_CHAT = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
TOOLS_MESSAGES = [
    {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


def seed_chat(correction: str = "Actually, make it London.") -> list[dict[str, Any]]:
    """The seed scenario: the user asks, the model calls a tool, the user interrupts (no result)."""
    call = {
        "id": SEED_CALL_ID,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    return [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "assistant", "content": INTERRUPTED},
        {"role": "user", "content": correction},
    ]


def seed_messages(correction: str = "Actually, make it London.") -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": "toolu_seed0001", "name": "get_weather", "input": {"city": "Paris"}}
    return [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": [call]},
        {"role": "assistant", "content": INTERRUPTED},
        {"role": "user", "content": correction},
    ]


def tool_results(api: str, body: dict[str, Any]) -> int:
    """How many tool results the transcript the provider received holds, in its own format."""
    if api == "openai-chat":
        return sum(1 for m in body["messages"] if m.get("role") == "tool")
    if api == "anthropic-messages":
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        return sum(1 for b in blocks if b.get("type") == "tool_result")
    if api == "gemini":
        parts = [p for c in body["contents"] for p in c["parts"]]
        return sum(1 for p in parts if "functionResponse" in p or "function_response" in p)
    return sum(1 for m in body["messages"] for b in m["content"] if "toolResult" in b)


def assert_repaired_and_accepted(provider: Provider) -> dict[str, Any]:
    api, rules, _, _ = PROVIDERS[provider.name]
    assert len(provider.fake.received) == 1
    arrival = provider.fake.last
    assert arrival.status == 200, arrival.body
    assert validate(arrival.body, api=api, provider=rules) == []
    # The interrupted call reached the provider answered, not dropped or left dangling.
    assert tool_results(api, arrival.body) == 1
    return arrival.body


CHAT_PROVIDERS = ["anthropic", "gemini", "bedrock", "mistral", "compat"]


# The Responses API's seed, for the routes litellm bridges from Responses.
CORRECTION = "Actually, make it London."
TOOLS_RESPONSES: list[Any] = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "strict": False,
    }
]


def seed_responses(correction: str = CORRECTION) -> list[Any]:
    """The seed scenario in Responses items: the model's call was interrupted, no output came back."""
    return [
        {"type": "message", "role": "user", "content": "What's the weather in Paris?"},
        {"type": "function_call", "call_id": SEED_CALL_ID, "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": INTERRUPTED}]},
        {"type": "message", "role": "user", "content": correction},
    ]
