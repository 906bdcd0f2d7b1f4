"""Every real case: the validator names the provider's own text, and the repaired body passes.

A case Suture does not pass yet says why in its ``xfail``: a strict expected failure, so the
day it passes the suite says so and the mark must go."""

from __future__ import annotations

import pytest

from tests._support.corpus import Case, judge, load_cases

CASES = load_cases()


def test_the_corpus_is_not_empty() -> None:
    assert CASES, "tests/corpus/cases holds no case"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=c.data["xfail"])] if c.data.get("xfail") else []
        )
        for c in CASES
    ],
)
def test_a_real_rejected_transcript_is_recognised_and_repaired(case: Case) -> None:
    verdict = judge(case)
    if case.data.get("wording", "current") == "current":
        assert verdict.reports_same_text, f"validate() said {verdict.first_violation!r}"
    else:
        assert verdict.first_violation is not None, "validate() found nothing wrong"
    if case.data.get("unrepairable"):
        return
    assert verdict.repaired_valid, verdict.remaining
    assert verdict.lost == []
