"""Guarantees that hold for every transcript, checked on generated broken ones."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sanitizer import Policy, sanitize, validate
from sanitizer.dialects import DIALECTS
from sanitizer.rules import RULES, Context
from tests._support.invariants import problems
from tests._support.transcript_strategies import (
    events,
    real_results,
    to_anthropic,
    to_bedrock,
    to_gemini,
    to_openai,
    to_responses,
    user_texts,
)

SHAPES = {
    "openai-chat": to_openai,
    "anthropic-messages": to_anthropic,
    "openai-responses": to_responses,
    "gemini": to_gemini,
    "bedrock-converse": to_bedrock,
}
POLICIES = [Policy(), Policy(orphan_tool_call="drop")]
quick = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _subsequence(needles: list[Any], haystack: list[Any]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@pytest.mark.parametrize("api", SHAPES)
@pytest.mark.parametrize("policy", POLICIES, ids=["pair", "drop"])
@quick
@given(evs=events)
def test_repaired_transcript_is_valid_settled_and_loses_nothing(api: str, policy: Policy, evs: list[Any]) -> None:
    body = SHAPES[api](evs)
    pristine = copy.deepcopy(body)
    result = sanitize(body, api=api, policy=policy)
    assert body == pristine, "input mutated"
    assert problems(result.body, api) == []
    assert [v.message for v in validate(result.body, api=api)] == []
    again = sanitize(result.body, api=api, policy=policy)
    assert again.repairs == [] and again.body is result.body
    assert json.dumps(sanitize(copy.deepcopy(pristine), api=api, policy=policy).body) == json.dumps(result.body)
    assert _subsequence(user_texts(body), user_texts(result.body))
    kept_results = real_results(result.body)
    assert sorted(set(kept_results)) == sorted(set(real_results(body)) & set(kept_results))
    if not result.repairs:
        assert result.body is body


@pytest.mark.parametrize("api", SHAPES)
@quick
@given(evs=events)
def test_the_fast_path_never_skips_a_repair(api: str, evs: list[Any]) -> None:
    """Whenever the cheap pre-check calls a body clean, the full rule pipeline agrees."""
    body = SHAPES[api](evs)
    dialect = DIALECTS[api]
    if not dialect.looks_clean(body):
        return
    transcript = dialect.parse(body)
    ctx = Context(api, dialect, Policy())
    for rule in RULES:
        if rule.applies_to(api):
            rule.apply(transcript, ctx)
    assert ctx.repairs == []


@pytest.mark.parametrize("api", ["openai-chat", "anthropic-messages"])
def test_valid_transcripts_take_the_fast_path(api: str) -> None:
    evs = [
        ("user", "hi"),
        ("calls", ["call_a", "call_b"], False),
        ("result", "call_a", "out-1"),
        ("result", "call_b", "out-2"),
        ("assistant", "ok"),
        ("user", "go on"),
    ]
    body = SHAPES[api](evs)
    if api == "anthropic-messages":
        body["messages"][3:5] = [
            {"role": "user", "content": body["messages"][3]["content"] + body["messages"][4]["content"]}
        ]
    assert DIALECTS[api].looks_clean(body)
    assert sanitize(body, api=api).body is body


# Where a gateway delivers an OpenAI Chat body, and the validator that speaks for that provider.
GATEWAY_TARGETS = {
    "mistral": "mistral",
    "anthropic": "anthropic-openai-compat",
    "gemini": "gemini-openai-compat",
    "deepseek": "deepseek",
    "bedrock": None,
}


@pytest.mark.parametrize("provider", GATEWAY_TARGETS)
@quick
@given(evs=events)
def test_chat_bodies_are_repaired_for_the_provider_they_reach(provider: str, evs: list[Any]) -> None:
    # A request ends with the user's turn: a trailing assistant message is a prefill, not damage.
    body = to_openai([*evs, ("user", "over to you")])
    if provider in ("anthropic", "bedrock"):
        body["tools"] = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    result = sanitize(body, api="openai-chat", provider=provider)
    assert problems(result.body, "openai-chat") == []
    checker = GATEWAY_TARGETS[provider]
    if checker is not None:
        assert [v.message for v in validate(result.body, api="openai-chat", provider=checker)] == []
    again = sanitize(result.body, api="openai-chat", provider=provider)
    assert again.repairs == [] and again.body is result.body
    sent = {c["id"] for m in result.body["messages"] for c in m.get("tool_calls") or []}
    client = {c["id"] for m in body["messages"] for c in m.get("tool_calls") or []}
    assert set(result.restore_ids) <= sent and set(result.restore_ids.values()) <= client
