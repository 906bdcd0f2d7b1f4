"""Every golden fixture: the repair is exactly the recorded one, settles, and is provider-valid.

Set SUTURE_UPDATE_GOLDEN=1 to rewrite ``after`` and ``repairs`` from the current behaviour when
a change is intended; review the diff before committing it.
"""

from __future__ import annotations

import copy
import json
import os

import pytest

from sanitizer import Policy, sanitize, validate, validator_provider
from tests._support.golden_cases import Case, all_cases, rewrite
from tests._support.invariants import problems

CASES = all_cases()
UPDATE = os.environ.get("SUTURE_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_case(case: Case) -> None:
    pristine = copy.deepcopy(case.before)
    result = sanitize(
        case.before,
        api=case.api,
        policy=Policy.from_mapping(case.policy),
        provider=case.provider,
        model=case.model,
        betas=case.betas,
    )
    repairs = [r.as_dict() for r in result.repairs]
    if UPDATE:
        rewrite(case, result.body, repairs)
        return
    assert case.before == pristine, "sanitize mutated its input"
    assert repairs == case.repairs
    assert result.body == case.after
    if not repairs:
        assert result.body is case.before


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_output_settles(case: Case) -> None:
    """Repairs converge: the repaired body needs no further repair, and serialises the same twice."""
    assert case.after is not None
    policy = Policy.from_mapping(case.policy)
    kw = {"provider": case.provider, "model": case.model, "betas": case.betas}
    again = sanitize(case.after, api=case.api, policy=policy, **kw)
    assert again.repairs == []
    assert again.body is case.after
    first = sanitize(case.before, api=case.api, policy=policy, **kw).body
    second = sanitize(copy.deepcopy(case.before), api=case.api, policy=policy, **kw).body
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_golden_output_follows_provider_rules(case: Case) -> None:
    assert case.after is not None
    if case.expect_valid:
        assert problems(case.after, case.api) == []
        checked_as = validator_provider(case.api, case.provider)
        found = validate(case.after, api=case.api, provider=checked_as, model=case.model, betas=case.betas)
        assert [v.message for v in found] == []
    else:
        assert problems(case.after, case.api) != [] or case.api not in ("openai-chat", "anthropic-messages")
        assert validate(case.after, api=case.api) != []


@pytest.mark.parametrize("case", [c for c in CASES if c.path.parent.name == "seeds"], ids=lambda c: c.id)
def test_seed_reports_are_rejected_by_the_provider_before_repair(case: Case) -> None:
    assert validate(case.before, api=case.api) != []
