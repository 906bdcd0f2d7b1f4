"""Broken transcripts the page's tests send, and what the page must show of them."""

from __future__ import annotations

from typing import Any

INTERRUPTED_CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "Run slow_tool and get_weather"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_slow_1", "type": "function", "function": {"name": "slow_tool", "arguments": "{}"}},
            {"id": "call_weather_2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        ],
    },
    {"role": "assistant", "content": "I noticed that you have interrupted me. What can I do for you?"},
    {"role": "user", "content": "停！换个做法：直接回答 42"},
    {"role": "tool", "tool_call_id": "call_weather_2", "content": "Sunny"},
]
"""An agent interrupted mid-tool: call_slow_1 never answered (TP001 pairs it with a synthetic
result), the recovery message and the user's correction between the calls and the late real
result (TP002 moves them after the results)."""

TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
    for name in ("slow_tool", "get_weather")
]

CLEAN_CHAT: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]

XSS = "<script>alert('xss')</script><img src=x onerror=\"alert('img')\">"
