"""The validator's views of a converted body follow litellm's own converters: for every golden and
corpus body of the format, the roles, tool-call ids and result ids come out the same."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import pytest

from sanitizer import SanitizeError
from sanitizer.validation._convert import converse_view, litellm_chat_view, litellm_responses_view
from tests._support.corpus import load_cases
from tests._support.golden_cases import all_cases

pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="needs suture[litellm]")


def _bodies(api: str) -> list[Any]:
    golden = [pytest.param(c.before, id=c.id) for c in all_cases() if c.api == api]
    corpus = [pytest.param(c.data["body"], id=c.name) for c in load_cases() if c.api == api]
    return golden + corpus


def _our_view(view: Callable[[Any], tuple[list[Any], Any]], body: dict[str, Any]) -> list[Any]:
    """The validator's view of ``body``; the test is skipped for a body the validator does not take.
    litellm, imported by the test after this, reads its model map locally."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        return view(body)[0]
    except SanitizeError:
        pytest.skip("not a body the validator takes")


def _chat_skeleton(messages: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            m["role"],
            tuple(c["id"] for c in m.get("tool_calls") or ()),
            m.get("tool_call_id"),
            m.get("content") is None,
        )
        for m in messages
    ]


@pytest.mark.parametrize("body", _bodies("anthropic-messages"))
def test_the_chat_view_is_litellm_s_anthropic_adapter(body: dict[str, Any]) -> None:
    ours = _our_view(litellm_chat_view, body)
    from litellm.llms.anthropic.messages.adapters.transformation import LiteLLMAnthropicMessagesAdapter

    if any(m.get("role") == "system" for m in body["messages"]):
        # litellm keeps or rewrites these by the target model's entry in its model table; the
        # repairs move them to `system` first (AN014) in any case.
        pytest.skip("a system message inside `messages`")
    theirs = LiteLLMAnthropicMessagesAdapter().translate_anthropic_messages_to_openai(body["messages"], model="gpt-4.1")
    if body.get("system"):
        theirs = [{"role": "system", "content": body["system"]}, *theirs]
    assert _chat_skeleton(ours) == _chat_skeleton([dict(m) for m in theirs])


def _converse_skeleton(turns: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (
            t["role"],
            tuple(b["toolUse"]["toolUseId"] for b in t["content"] if "toolUse" in b),
            tuple(b["toolResult"]["toolUseId"] for b in t["content"] if "toolResult" in b),
            sum(1 for b in t["content"] if "text" in b),
        )
        for t in turns
    ]


@pytest.mark.parametrize("body", _bodies("openai-chat"))
def test_the_converse_view_is_litellm_s_converse_conversion(body: dict[str, Any]) -> None:
    ours = _our_view(converse_view, body)
    from litellm.litellm_core_utils.prompt_templates.factory import _bedrock_converse_messages_pt

    chat = [m for m in body["messages"] if m.get("role") not in ("system", "developer")]
    if any(m.get("role") == "tool" and not m.get("tool_call_id") for m in chat):
        # litellm makes up an id for it (a uuid, or 'None'); the repairs settle it first (OA003).
        pytest.skip("a tool message without its id")
    try:
        theirs = _bedrock_converse_messages_pt(
            chat, model="anthropic.claude-sonnet-4-5", llm_provider="bedrock_converse"
        )
    except Exception as exc:  # litellm refuses some bodies outright (a role it has no place for)
        pytest.skip(f"litellm refuses it: {type(exc).__name__}")
    assert _converse_skeleton(ours) == _converse_skeleton([dict(t) for t in theirs])


def _content_kind(content: Any) -> str:
    return "null" if content is None else "string" if isinstance(content, str) else "parts"


def _reasoning_shapes() -> list[Any]:
    """Where a reasoning item's text goes: to the assistant message after it, or, where none
    follows, to an assistant message of its own; one without text goes nowhere."""
    said = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "check the tests"}]}
    in_content = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "look"}]}
    mute = {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB-1"}
    user = {"type": "message", "role": "user", "content": "go"}
    call = {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "a b"}
    answer = {"type": "message", "role": "assistant", "content": "done"}
    shapes = {
        "before-a-call": [user, said, call, output],
        "before-an-output": [user, call, said, output, user],
        "before-a-user-message": [user, call, output, said, user],
        "two-before-a-user-message": [user, answer, said, in_content, user],
        "at-the-end": [user, answer, said],
        "without-text-at-the-end": [user, call, output, mute],
        "without-text-before-an-answer": [user, mute, answer],
        "text-in-content-before-an-answer": [user, in_content, answer],
    }
    return [pytest.param({"model": "m", "input": items}, id=f"reasoning-{name}") for name, items in shapes.items()]


@pytest.mark.parametrize("body", _bodies("openai-responses") + _reasoning_shapes())
def test_the_chat_view_of_a_responses_body_is_litellm_s_responses_bridge(body: dict[str, Any]) -> None:
    ours = _our_view(litellm_responses_view, body)
    from litellm.responses.litellm_completion_transformation.transformation import LiteLLMCompletionResponsesConfig

    try:
        theirs = LiteLLMCompletionResponsesConfig.transform_responses_api_input_to_messages(
            input=body["input"], responses_api_request=body, replay_reasoning=True
        )
    except Exception as exc:  # litellm refuses items it cannot bridge (server-side tools, references)
        pytest.skip(f"litellm's bridge refuses it: {type(exc).__name__}")
    theirs = [dict(m) for m in theirs]
    assert _chat_skeleton(ours) == _chat_skeleton(theirs)
    assert [_content_kind(m.get("content")) for m in ours] == [_content_kind(m.get("content")) for m in theirs]
    # Where reasoning reaches a thinking model (DeepSeek's and Kimi's rules ask for it).
    assert [bool(m.get("reasoning_content")) for m in ours] == [bool(m.get("reasoning_content")) for m in theirs]
