"""The fast paths never skip a repair: a provider's own rules (``Rule.clean``), and the rules
ahead of the first one a format's check suspects (``Dialect.suspects``), which the full pass skips.

A valid body bound for a provider with rules of its own (DeepSeek, Moonshot, Groq, an Anthropic
body bound for OpenAI...) is let through after a quick look by each of those rules, and by the
format's own rules that turn on the model or the policy (prefill, thought signatures, Llama's
tool-use turns, Gemini 1's turn positions). The property:
whatever the body, the model and the policy, ``sanitize`` repairs exactly what the full pass (every
rule applied) repairs, into the same body. Bodies: every golden fixture before and after repair, every corpus case,
and generated transcripts, each bound for every provider its format takes, under several models
(the rules that depend on one: DeepSeek's reasoner and V4, Kimi, Gemini 3 and 1, vLLM's chat
templates, the Claude models without prefill, Bedrock's Llama) and policies.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from sanitizer import SANITIZE_PROVIDERS, Policy, SanitizeError, sanitize
from sanitizer.dialects import DIALECTS
from sanitizer.providers import ACCEPTED
from sanitizer.rules import RULES
from sanitizer.rules._base import Rule
from tests._support.corpus import load_cases
from tests._support.golden_cases import all_cases
from tests._support.mutations import damaged as damaged_body
from tests._support.transcript_strategies import events, to_anthropic, to_bedrock, to_gemini, to_openai, to_responses

MODELS = (
    None,
    "deepseek-reasoner",
    "deepseek-v4-pro",
    "kimi-k2.5",
    "kimi-k2-thinking",
    "gemini-3-pro-preview",
    "gemini-1.5-flash",
    "mistralai/Mistral-7B-Instruct-v0.2",
    "claude-sonnet-4-6",
    "us.meta.llama3-2-11b-instruct-v1:0",
    "gpt-4.1",
)
POLICIES = (Policy(), Policy(trailing_assistant="keep"), Policy(trailing_assistant="drop"))
CHECKED = {r.code for r in RULES if type(r).clean is not Rule.clean}


def _full(body: Any, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[list[str], Any]:
    """The repairs and the body of the full pass: every rule applied, no quick look."""
    with monkeypatch.context() as m:
        _look_at_everything(m, kw["api"])
        try:
            result = sanitize(copy.deepcopy(body), **kw)
        except SanitizeError:
            return [], body  # a body the rules cannot read (a Responses text input): nothing to repair
        return [r.code for r in result.repairs], result.body


def _look_at_everything(m: pytest.MonkeyPatch, api: str) -> None:
    """The format's quick check suspects every rule: each one is applied, from the first."""
    m.setattr(type(DIALECTS[api]), "suspects", lambda self, body: None)


def _bodies() -> Iterator[tuple[str, str, Any]]:
    for case in all_cases():
        yield case.id, case.api, case.before
        if case.after is not None:
            yield case.id + "/after", case.api, case.after
    for corpus in load_cases():
        yield corpus.name, corpus.api, corpus.data["body"]


BODIES = list(_bodies())
SHAPES = {
    "openai-chat": to_openai,
    "anthropic-messages": to_anthropic,
    "openai-responses": to_responses,
    "gemini": to_gemini,
    "bedrock-converse": to_bedrock,
}


def _same(api: str, body: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    mismatches = []
    for provider in ACCEPTED[api]:
        for model in MODELS:
            for policy in POLICIES:
                kw: dict[str, Any] = {"api": api, "provider": provider, "policy": policy, "model": model}
                result = sanitize(body, **kw)
                quick = [r.code for r in result.repairs]
                full, full_body = _full(body, monkeypatch, **kw)
                if quick != full:
                    mismatches.append(f"{provider} {model} {policy.trailing_assistant}: {quick} != {full}")
                elif result.body != full_body:
                    mismatches.append(f"{provider} {model} {policy.trailing_assistant}: {quick}, another body")
    return mismatches


def test_some_rules_take_a_quick_look() -> None:
    assert {"PV004", "PV006", "PV007", "PV008", "PV009", "AN017"} <= CHECKED


@pytest.mark.parametrize(("name", "api", "body"), BODIES, ids=[b[0] for b in BODIES])
def test_the_quick_look_repairs_what_the_full_pass_does(
    name: str, api: str, body: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _same(api, body, monkeypatch) == []


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(evs=events)
def test_the_quick_look_on_generated_transcripts(evs: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for api, shape in SHAPES.items():
        assert _same(api, shape(evs), monkeypatch) == []


def _outcome(body: Any, api: str, monkeypatch: pytest.MonkeyPatch | None) -> Any:
    with pytest.MonkeyPatch.context() as m:
        if monkeypatch is not None:
            _look_at_everything(m, api)
        try:
            result = sanitize(copy.deepcopy(body), api=api)
        except SanitizeError as error:
            return ("refused", error.path)
        return [(r.code, r.message_index) for r in result.repairs]


@pytest.mark.parametrize(("name", "api", "body"), BODIES, ids=[b[0] for b in BODIES])
def test_a_damaged_field_is_never_called_clean(name: str, api: str, body: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The formats' own checks read fields without a type test each (a lookup that fails is a
    body for the full pass): whatever field is missing or wrong, sanitize() makes the repairs the
    full pass makes, and never fails with anything but SanitizeError. A body whose shape the full
    pass refuses may also go on unchanged, for the provider to refuse (a Responses text input
    has no transcript to read at all)."""
    for seed in range(12):
        damaged = damaged_body(body, seed)
        quick, full = _outcome(damaged, api, None), _outcome(damaged, api, monkeypatch)
        if isinstance(full, tuple) and quick == []:
            continue
        assert quick == full, (seed, damaged)


_TRANSCRIPT_KEY = {"openai-chat": "messages", "anthropic-messages": "messages", "openai-responses": "input"}
_TRANSCRIPT_KEY |= {"gemini": "contents", "bedrock-converse": "messages"}
_BOUND = [(api, provider) for api, providers in SANITIZE_PROVIDERS.items() for provider in (None, *providers)]


@pytest.mark.parametrize(("api", "provider"), _BOUND, ids=[f"{a}-{p}" for a, p in _BOUND])
def test_a_body_without_a_transcript_list_is_passed_or_refused(api: str, provider: str | None) -> None:
    """No transcript field, or one that is not a list (a Responses text input is one): the quick
    looks of the provider's rules must not read it as a list. sanitize() lets the body through
    unchanged or refuses it with SanitizeError, never anything else."""
    key = _TRANSCRIPT_KEY[api]
    for value in ("absent", None, "hello", 5, {}, {"role": "user"}, []):
        body: dict[str, Any] = {"model": "m"} if value == "absent" else {"model": "m", key: value}
        try:
            result = sanitize(copy.deepcopy(body), api=api, provider=provider)
        except SanitizeError:
            continue
        assert result.body == body


def test_tool_calls_on_a_message_that_cannot_call_leave_it_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the fuzzer: a system message with no content and a stray ``tool_calls`` key is
    empty (the parse reads calls of assistants only), and empty-message's quick look must say so,
    whether or not a later rule's look asks for the full pass."""
    for extra in ({}, {"tools": []}):
        body = {
            "model": "m",
            **extra,
            "messages": [
                {"role": "system", "content": "", "tool_calls": [{"id": "c1", "type": "function"}]},
                {"role": "user", "content": "hi"},
            ],
        }
        for provider in ("bedrock", "anthropic", "gemini", "vllm"):
            kw: dict[str, Any] = {"api": "openai-chat", "provider": provider}
            assert [r.code for r in sanitize(body, **kw).repairs][:1] == ["AN003"]
            assert _same("openai-chat", body, monkeypatch) == []


def test_an_item_of_no_known_type_with_a_role_that_cannot_be_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the fuzzer: the Responses check passes an item of a type it does not know on
    unread, and content-parts-not-string's quick look (bound for DeepSeek) met its role, a list,
    with a set test that raised TypeError instead of answering."""
    body = {
        "model": "gpt-5",
        "input": [
            {"type": "mefalse", "role": [{"type": "output_text", "text": "hello"}]},
            {"type": "message", "role": "user", "content": "more"},
        ],
        "store": False,
    }
    result = sanitize(body, api="openai-responses", provider="deepseek")
    assert (result.repairs, result.body) == ([], body)
    assert _same("openai-responses", body, monkeypatch) == []
