"""The rule table is the documentation: every rule is complete, unique and has its fixtures."""

from __future__ import annotations

import re

import pytest

from sanitizer.rules import DOC_HEADINGS, RULES, Rule
from tests._support.golden_cases import GOLDEN, all_cases


def test_codes_and_names_are_unique_and_well_formed() -> None:
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for rule in RULES:
        assert re.fullmatch(r"[A-Z]{2}\d{3}", rule.code), rule.code
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name), rule.name


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_documents_itself(rule: Rule) -> None:
    doc = rule.documentation()
    positions = [doc.find(heading + ":") for heading in DOC_HEADINGS]
    assert all(p >= 0 for p in positions), f"{rule.code} lacks one of {DOC_HEADINGS}"
    assert positions == sorted(positions), f"{rule.code}: headings out of order"
    why = doc[positions[1] : positions[2]]
    assert '"' in why, f"{rule.code}: Why must quote the provider's error"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_golden_fixtures_with_and_without_repairs(rule: Rule) -> None:
    folder = GOLDEN / f"{rule.code}-{rule.name}"
    assert folder.is_dir(), f"missing golden fixtures: {folder}"
    cases = [c for c in all_cases() if c.path.parent == folder]
    fired = [c for c in cases if any(r["code"] == rule.code for r in c.repairs or [])]
    untouched = [c for c in cases if not c.repairs]
    assert fired, f"{rule.code}: no fixture where the rule fires"
    assert untouched, f"{rule.code}: no no-change fixture"


def test_rule_module_names_follow_their_codes() -> None:
    for rule in RULES:
        module = type(rule).__module__.rsplit(".", 1)[-1]
        assert module.startswith(rule.code.lower() + "_"), module
