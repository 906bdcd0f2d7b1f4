"""The seed transcript in each wire format: an interrupted tool call with a recovery message.

The seed (AgentScope 2.0.0 interrupt bug): the user asks, the assistant calls a tool, the
agent is interrupted and appends "I noticed that you have interrupted me..." as an assistant
message, then the user sends a correction. No tool result was ever recorded, so each
provider rejects it. The repaired form puts a synthetic result right after the call.
"""

from __future__ import annotations

from typing import Any

ASK = "Please call slow_tool to finish the task."
RECOVERY = "I noticed that you have interrupted me. What can I do for you?"
CORRECTION = "Stop that; just tell me the weather instead."
INTERRUPTED = "Tool call was interrupted before it returned a result."

CHAT_TOOLS: list[Any] = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
    for n in ("slow_tool", "get_weather")
]
RESPONSES_TOOLS: list[Any] = [
    {"type": "function", "name": n, "parameters": {"type": "object", "properties": {}}, "strict": False}
    for n in ("slow_tool", "get_weather")
]
ANTHROPIC_TOOLS: list[Any] = [
    {"name": n, "input_schema": {"type": "object", "properties": {}}} for n in ("slow_tool", "get_weather")
]


def chat_seed() -> list[Any]:
    return [
        {"role": "user", "content": ASK},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_slow_1", "type": "function", "function": {"name": "slow_tool", "arguments": "{}"}}
            ],
        },
        {"role": "assistant", "content": RECOVERY},
        {"role": "user", "content": CORRECTION},
    ]


def chat_repaired() -> list[Any]:
    seed = chat_seed()
    return [*seed[:2], {"role": "tool", "tool_call_id": "call_slow_1", "content": INTERRUPTED}, *seed[2:]]


def responses_seed() -> list[Any]:
    return [
        {"role": "user", "content": ASK},
        {"type": "function_call", "call_id": "call_slow_1", "name": "slow_tool", "arguments": "{}"},
        {"role": "assistant", "content": RECOVERY},
        {"role": "user", "content": CORRECTION},
    ]


def responses_repaired() -> list[Any]:
    seed = responses_seed()
    output = {"type": "function_call_output", "call_id": "call_slow_1", "output": INTERRUPTED}
    return [*seed[:2], output, *seed[2:]]


def anthropic_seed() -> list[Any]:
    return [
        {"role": "user", "content": ASK},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_slow_1", "name": "slow_tool", "input": {}}],
        },
        {"role": "assistant", "content": RECOVERY},
        {"role": "user", "content": CORRECTION},
    ]


def anthropic_repaired() -> list[Any]:
    seed = anthropic_seed()
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_slow_1", "content": INTERRUPTED, "is_error": True}],
    }
    return [*seed[:2], result, *seed[2:]]


GEMINI_TOOLS: list[Any] = [
    {
        "functionDeclarations": [
            {"name": n, "parameters": {"type": "object", "properties": {}}} for n in ("slow_tool", "get_weather")
        ]
    }
]
BEDROCK_TOOL_CONFIG: dict[str, Any] = {
    "tools": [
        {"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object", "properties": {}}}}}
        for n in ("slow_tool", "get_weather")
    ]
}


def gemini_seed() -> list[Any]:
    return [
        {"role": "user", "parts": [{"text": ASK}]},
        {"role": "model", "parts": [{"functionCall": {"name": "slow_tool", "args": {}}}]},
        {"role": "model", "parts": [{"text": RECOVERY}]},
        {"role": "user", "parts": [{"text": CORRECTION}]},
    ]


def gemini_repaired() -> list[Any]:
    seed = gemini_seed()
    response = {"functionResponse": {"name": "slow_tool", "response": {"error": INTERRUPTED}}}
    return [*seed[:2], {"role": "user", "parts": [response]}, *seed[2:]]


def bedrock_seed() -> list[Any]:
    return [
        {"role": "user", "content": [{"text": ASK}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "tooluse_slow_1", "name": "slow_tool", "input": {}}}],
        },
        {"role": "assistant", "content": [{"text": RECOVERY}]},
        {"role": "user", "content": [{"text": CORRECTION}]},
    ]


def bedrock_repaired() -> list[Any]:
    seed = bedrock_seed()
    result = {"toolResult": {"toolUseId": "tooluse_slow_1", "content": [{"text": INTERRUPTED}], "status": "error"}}
    return [*seed[:2], {"role": "user", "content": [result]}, *seed[2:]]
