"""The public surface: what users import, and how bad input is reported."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest

import sanitizer
from sanitizer import Policy, PolicyError, SanitizeError, UnknownAPIError, sanitize

PACKAGE = Path(sanitizer.__file__).parent
FORBIDDEN = {
    "httpx",
    "starlette",
    "uvicorn",
    "yaml",
    "pydantic_settings",
    "proxy",
    "logging",
    "os",
    "time",
    "random",
    "datetime",
    "socket",
    "asyncio",
    "requests",
    "litellm",
}


def test_public_names_are_pinned() -> None:
    assert set(sanitizer.__all__) >= {
        "sanitize",
        "Policy",
        "SanitizeResult",
        "Repair",
        "SanitizeError",
        "PolicyError",
        "UnknownAPIError",
    }
    for name in sanitizer.__all__:
        assert hasattr(sanitizer, name)


def test_sanitizer_stays_pure() -> None:
    """No module of sanitizer/ imports I/O, clocks, randomness or the proxy."""
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.relative_to(PACKAGE)} imports {name}"


def test_importing_sanitizer_pulls_in_no_server_library() -> None:
    import subprocess

    code = "import sys, sanitizer; print(sorted(m for m in ('httpx','starlette','uvicorn','yaml') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("openai-chat", [], "the request body must be a JSON object, not an array"),
    ("openai-chat", {}, "messages: is required"),
    ("openai-chat", {"messages": {"role": "user"}}, "messages: must be a list, not an object"),
    ("openai-chat", {"messages": ["hi"]}, "messages[0]: must be an object, not a string"),
    ("openai-chat", {"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role: must be one of"),
    ("openai-chat", {"messages": [{"role": "user", "content": 5}]}, "messages[0].content: must be a string"),
    ("openai-chat", {"messages": [{"role": "user", "content": ["x"]}]}, "messages[0].content[0]: must be an object"),
    (
        "openai-chat",
        {"messages": [{"role": "assistant", "tool_calls": {}}]},
        "messages[0].tool_calls: must be an array",
    ),
    (
        "openai-chat",
        {"messages": [{"role": "assistant", "tool_calls": [{"type": "function"}]}]},
        "messages[0].tool_calls[0].id: is missing",
    ),
    (
        "openai-chat",
        {"messages": [{"role": "tool", "tool_call_id": 7, "content": "x"}]},
        "messages[0].tool_call_id: must be a string, not a number",
    ),
    (
        "anthropic-messages",
        {"messages": [{"role": "tool", "content": "x"}]},
        "messages[0].role: must be 'user' or 'assistant', not 'tool'",
    ),
    ("anthropic-messages", {"messages": [{"role": "user"}]}, "messages[0].content: is required"),
    (
        "anthropic-messages",
        {"messages": [{"role": "user", "content": [{"text": "x"}]}]},
        "messages[0].content[0].type: is missing",
    ),
    (
        "anthropic-messages",
        {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}]},
        "messages[0].content[0].id: is missing",
    ),
    (
        "anthropic-messages",
        {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}]},
        "messages[0].content[0].tool_use_id: must be a string, not a number",
    ),
    (
        "anthropic-messages",
        {"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "x"}]}]},
        "messages[0].content[0]: tool calls belong in assistant messages, not in user messages",
    ),
    ("openai-responses", {"input": [{"type": "function_call", "call_id": 5}]}, "input[0].call_id: must be a string"),
    (
        "openai-responses",
        {"input": [{"type": "message", "role": "robot", "content": "x"}]},
        "input[0].role: must be one of",
    ),
    (
        "gemini",
        {"contents": [{"role": "user", "parts": {"text": "x"}}]},
        "contents[0].parts: must be an array, not an object",
    ),
    (
        "gemini",
        {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]},
        "contents[0].parts[0]: tool calls belong in model messages, not in user messages",
    ),
    (
        "bedrock-converse",
        {"messages": [{"role": "user", "content": "hi"}]},
        "messages[0].content: must be an array of blocks, not a string",
    ),
    (
        "bedrock-converse",
        {"messages": [{"role": "assistant", "content": [{"toolUse": {"name": "f"}}]}]},
        "messages[0].content[0].toolUse.toolUseId: is missing",
    ),
]


@pytest.mark.parametrize(("api", "body", "message"), BAD_BODIES)
def test_wrong_shapes_raise_one_typed_error_naming_the_field(api: str, body: Any, message: str) -> None:
    with pytest.raises(SanitizeError) as caught:
        sanitize(body, api=api)
    assert str(caught.value).startswith(message)


def test_unknown_api_lists_the_known_ones() -> None:
    with pytest.raises(UnknownAPIError, match="known: openai-chat, anthropic-messages"):
        sanitize({"messages": []}, api="cohere")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"orphan_tool_call": "delete"}, "orphan_tool_call must be 'pair' or 'drop'"),
        ({"trailing_tool_call": "pair-later"}, "trailing_tool_call must be 'pair' or 'leave'"),
        ({"trailing_assistant": "strip"}, "trailing_assistant must be 'keep', 'drop' or 'auto'"),
        ({"synthetic_result_text": "   "}, "synthetic_result_text must be a non-blank string"),
        ({"synthetic_result_text": "{tool} failed"}, "may use {name} and {id} only, not {tool}"),
        ({"synthetic_result_text": "{name"}, "not a valid template"),
        ({"orphan": "pair"}, "unknown policy key(s): orphan; known:"),
    ],
)
def test_bad_policies_are_rejected_with_a_clear_message(values: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.from_mapping(values)
    assert message in str(caught.value)


def test_synthetic_text_is_configurable_and_names_the_tool() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "grep"}}]},
        ]
    }
    policy = Policy(synthetic_result_text="{name} ({id}) was cancelled.")
    result = sanitize(body, api="openai-chat", policy=policy)
    assert result.body["messages"][-1] == {"role": "tool", "tool_call_id": "c1", "content": "grep (c1) was cancelled."}
    default = sanitize(body, api="openai-chat").body["messages"][-1]["content"]
    assert "grep" in default and "interrupted" in default and "may have partly run" in default


def test_large_broken_transcript_is_repaired_in_linear_time() -> None:
    """10,000 messages with an orphan in the middle: repaired, not hung (generous bound, no timing race)."""
    messages: list[dict[str, Any]] = []
    for turn in range(2500):
        messages += [
            {"role": "user", "content": f"q{turn}"},
            {"role": "assistant", "tool_calls": [{"id": f"c{turn}", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{turn}", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ]
    messages[5002] = {"role": "assistant", "content": "I noticed that you have interrupted me."}
    result = sanitize({"messages": messages}, api="openai-chat")
    assert [(r.code, r.tool_call_id) for r in result.repairs] == [("TP001", "c1250")]
    assert len(result.body["messages"]) == 10_001


def test_the_model_a_caller_names_decides_whether_a_prefill_goes() -> None:
    # Bedrock and Vertex name the model in the URL, not the body: the caller passes it.
    body = {"max_tokens": 10, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "The"}]}
    assert sanitize(body, api="anthropic-messages").body is body
    repaired = sanitize(body, api="anthropic-messages", model="us.anthropic.claude-opus-4-6-v1:0")
    assert [r.code for r in repaired.repairs] == ["AN009"]
    assert repaired.body["messages"] == body["messages"][:1]
    kept = sanitize(body, api="anthropic-messages", model="claude-opus-4-6", policy=Policy(trailing_assistant="keep"))
    assert kept.body is body
