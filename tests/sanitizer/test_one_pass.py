"""One pass of ``sanitize`` settles whatever a client sends: the repaired body needs no further
repair. A body that settles only on a second pass was sent still broken, and the provider's 400
comes back on the very turn Suture was meant to save.

Bodies: every golden fixture and corpus case, each reshaped (a message copied, dropped, swapped,
moved: what history handling does to a transcript) and damaged (one field removed or given a
wrong value), for its provider and for others its format is bound for, under each pairing policy. The golden tests hold the fixtures
themselves to this; ``bench/fuzz_sanitize.py`` searches further, by hand.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from sanitizer import SANITIZE_PROVIDERS, Policy, SanitizeError, sanitize
from tests._support.corpus import load_cases
from tests._support.golden_cases import all_cases
from tests._support.mutations import damaged, reshaped

POLICIES = (Policy(), Policy(orphan_tool_call="drop"), Policy(orphan_tool_result="drop"))
SEEDS = range(10)


def _bodies() -> Iterator[Any]:
    for case in all_cases():
        yield pytest.param(case.api, case.provider, case.model, case.before, id=case.id)
    for corpus in load_cases():
        yield pytest.param(corpus.api, corpus.provider, corpus.data.get("model"), corpus.data["body"], id=corpus.name)


@pytest.mark.parametrize(("api", "provider", "model", "body"), list(_bodies()))
def test_one_pass_settles_every_reshaped_or_damaged_body(
    api: str, provider: str | None, model: str | None, body: Any
) -> None:
    unsettled = []
    bound = SANITIZE_PROVIDERS[api]
    for seed in SEEDS:
        # Its own provider, and one more each seed: the providers' own rules meet every shape.
        for to in {provider, bound[seed % len(bound)]}:
            for variant in (reshaped(body, seed), damaged(body, seed)):
                for policy in POLICIES:
                    try:
                        first = sanitize(copy.deepcopy(variant), api=api, provider=to, model=model, policy=policy)
                    except SanitizeError:
                        continue  # a shape the rules cannot read is refused, not repaired
                    again = sanitize(first.body, api=api, provider=to, model=model, policy=policy)
                    if again.repairs:
                        unsettled.append(
                            (seed, to, policy, [r.code for r in first.repairs], [r.code for r in again.repairs])
                        )
    assert unsettled == []
