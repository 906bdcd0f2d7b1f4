"""Parity, enforced: every violation the validator can report is registered, triggered by some
body, and cleared by ``sanitize`` for the same provider, or listed as unrepairable / not yet repaired.

Triggers are the golden fixtures' ``before`` bodies and the corpus bodies, validated for every
provider the table lists for their format, then the hand-written ones below for codes none of
those reaches."""

from __future__ import annotations

import typing
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest

from proxy.commands._common import provider_of
from proxy.routes.model_routes import _repairable
from sanitizer import APIS, Api, SanitizeError, sanitize, validate, validator_provider
from sanitizer.providers import ACCEPTED, TABLE, binding
from sanitizer.rules import RULES, violations_reference
from sanitizer.sanitize import _RULES
from sanitizer.validation._envelope import resolve
from sanitizer.validation._registry import NOT_YET_REPAIRED, REGISTRY, UNREPAIRABLE
from tests._support.corpus import load_cases
from tests._support.golden_cases import all_cases


@dataclass(frozen=True)
class Trigger:
    name: str
    api: str
    provider: str
    model: str | None
    body: dict[str, Any]


_U = {"role": "user", "content": "hi"}
# Codes no fixture or corpus body reaches.
HAND: tuple[Trigger, ...] = (
    # A request with neither a message nor a system prompt: the unrepairable form of A20.
    Trigger(
        "no-prompt-at-all", "anthropic-messages", "anthropic", None, {"model": "claude-sonnet-4-5", "messages": []}
    ),
    Trigger(
        "system-in-messages",
        "anthropic-messages",
        "anthropic",
        None,
        {"model": "claude-sonnet-4-5", "messages": [{"role": "system", "content": "Be brief."}, _U]},
    ),
    Trigger(
        "duplicate-tool-names",
        "anthropic-messages",
        "anthropic",
        None,
        {
            "model": "claude-sonnet-4-5",
            "messages": [_U],
            "tools": [{"name": "ls", "input_schema": {"type": "object"}}] * 2,
        },
    ),
    Trigger(
        "thinking-in-final-message",
        "anthropic-messages",
        "anthropic",
        None,
        {
            "model": "claude-sonnet-4-5",
            "messages": [
                _U,
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hm", "signature": "sig"},
                        {"type": "text", "text": "Hello"},
                    ],
                },
            ],
        },
    ),
    Trigger(
        "bedrock-assistant-first",
        "bedrock-converse",
        "bedrock",
        None,
        {
            "messages": [
                {"role": "assistant", "content": [{"text": "Hello"}]},
                {"role": "user", "content": [{"text": "hi"}]},
            ]
        },
    ),
    Trigger("gemini-no-contents", "gemini", "gemini", None, {"contents": []}),
    # Thinking lost from the last tool round, on a model that always thinks: the unrepairable form of
    # A13 (thinking-without-history turns thinking off where the model lets it).
    Trigger(
        "thinking-lost-on-a-model-that-always-thinks",
        "anthropic-messages",
        "anthropic",
        None,
        {
            "model": "claude-fable-5",
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
            "messages": [
                _U,
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
            ],
        },
    ),
)


def _triggers() -> list[Trigger]:
    found = [Trigger(c.id, c.api, p, c.model, c.before) for c in all_cases() for p in ACCEPTED[c.api]]
    found += [
        Trigger(c.name, c.api, p, c.data.get("model"), c.data["body"]) for c in load_cases() for p in ACCEPTED[c.api]
    ]
    return found + list(HAND)


@dataclass(frozen=True)
class Outcome:
    trigger: Trigger
    before: frozenset[str]
    after: frozenset[str] | None
    """The codes left once sanitized; None when sanitize refuses the body's shape."""


def _outcomes() -> list[Outcome]:
    out = []
    for t in _triggers():
        try:
            before = validate(t.body, api=t.api, provider=t.provider, model=t.model)
        except SanitizeError:
            continue
        if not before:
            continue
        try:
            repaired = sanitize(t.body, api=t.api, provider=t.provider, model=t.model).body
            after: frozenset[str] | None = frozenset(
                v.rule for v in validate(repaired, api=t.api, provider=t.provider, model=t.model)
            )
        except SanitizeError:
            after = None
        out.append(Outcome(t, frozenset(v.rule for v in before), after))
    return out


OUTCOMES = _outcomes()
BY_CODE: dict[str, list[Outcome]] = defaultdict(list)
for _o in OUTCOMES:
    for _code in _o.before:
        BY_CODE[_code].append(_o)
LISTED = {**UNREPAIRABLE, **NOT_YET_REPAIRED}


def _survives(o: Outcome, code: str) -> bool:
    return o.after is None or code in o.after


def test_every_code_reported_is_registered_and_every_registered_code_is_triggered() -> None:
    assert set(BY_CODE) - set(REGISTRY) == set(), "codes the validator reports but the registry lacks"
    assert set(REGISTRY) - set(BY_CODE) == set(), "registered codes no body triggers: add a HAND trigger"


def test_the_registry_names_the_profiles_that_report_each_code() -> None:
    wrong = {
        (code, binding(o.trigger.api, o.trigger.provider).profile)
        for code, outcomes in BY_CODE.items()
        for o in outcomes
        if binding(o.trigger.api, o.trigger.provider).profile not in REGISTRY[code].providers
    }
    assert wrong == set()


def test_the_lists_are_disjoint_and_registered() -> None:
    assert set(UNREPAIRABLE).isdisjoint(NOT_YET_REPAIRED)
    assert set(LISTED) <= set(REGISTRY)


@pytest.mark.parametrize("code", sorted(set(REGISTRY) - set(LISTED)))
def test_a_repairable_code_is_repaired_for_its_provider(code: str) -> None:
    # A body left with a listed defect (one it held, or one a repair exposed) cannot come out clean.
    checked = [
        o
        for o in BY_CODE[code]
        if not ((o.after is None and o.before & set(LISTED)) or (o.after and o.after & set(LISTED)))
    ]
    assert checked, f"{code}: no trigger free of unrepairable defects"
    left = {(o.trigger.name, o.trigger.provider): sorted(o.after or ()) for o in checked if o.after != frozenset()}
    assert left == {}


@pytest.mark.parametrize("code", sorted(LISTED))
def test_a_listed_code_is_still_unrepaired(code: str) -> None:
    """A listed code that some rule now clears everywhere must leave its list."""
    assert any(_survives(o, code) for o in BY_CODE[code]), f"{code} is repaired now: take it off its list"


def test_rules_fix_registered_codes_and_every_repairable_code_has_a_rule() -> None:
    fixed = {code for rule in RULES for code in rule.fixes}
    assert fixed - set(REGISTRY) == set(), "rules declare codes the registry lacks"
    assert set(REGISTRY) - set(LISTED) - fixed == set(), "repairable codes no rule declares in fixes"


@pytest.mark.parametrize(("api", "name"), [(api, name) for api, names in ACCEPTED.items() for name in names])
def test_one_provider_name_means_one_profile_and_one_rule_set_everywhere(api: str, name: str) -> None:
    entry = binding(api, name)
    # validate(), strict mode (which calls validate with the sanitize provider) and `suture check`.
    assert resolve(api, name) == validator_provider(api, name) == entry.profile
    assert provider_of(api, name) == name
    # sanitize() and the route table.
    assert _RULES[(api, entry.rules)] == tuple(r for r in RULES if r.applies_to(api, entry.rules))
    assert (api in _repairable(name)) == (api in ("openai-chat", "anthropic-messages", "openai-responses"))
    if api not in ("openai-chat", "anthropic-messages"):
        return
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    for other in (entry.provider, *entry.aliases):
        assert sanitize(body, api=api, provider=other) == sanitize(body, api=api, provider=name)
        assert validate(body, api=api, provider=other) == validate(body, api=api, provider=name)


def test_the_api_type_names_exactly_the_formats_of_the_table() -> None:
    assert set(typing.get_args(Api)) == set(TABLE) == set(APIS)


def test_the_format_s_own_provider_comes_first() -> None:
    for api, bindings in TABLE.items():
        assert bindings[0].provider == ACCEPTED[api][0] == binding(api, None).provider
        assert bindings[0].profile == bindings[0].provider


def test_suture_rules_violations_prints_every_code_and_what_repairs_it() -> None:
    text = violations_reference()
    for code in REGISTRY:
        assert f"### {code}\n" in text
    assert "- fixed by: AN008 prefill-trailing-whitespace" in text
    assert text.count("- unrepairable: ") == len(UNREPAIRABLE)
    assert text.count("- not yet repaired: ") == len(NOT_YET_REPAIRED)
