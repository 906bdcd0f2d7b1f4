"""Every violation a validation test makes the validator report has a code in the registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sanitizer.validation import _envelope
from sanitizer.validation._registry import REGISTRY
from sanitizer.validation._violation import Violation


@pytest.fixture(autouse=True)
def _registered_codes_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    seen: set[str] = set()

    def record(rule: str, *args: Any, **kwargs: Any) -> Violation:
        seen.add(rule)
        return Violation(rule, *args, **kwargs)

    # _envelope builds every Violation the validator returns.
    monkeypatch.setattr(_envelope, "Violation", record)
    yield
    assert seen - set(REGISTRY) == set(), "the validator reported codes the registry lacks"
