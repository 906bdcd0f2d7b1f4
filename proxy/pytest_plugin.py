"""Suture's pytest plugin: pin, in your own test suite, that Suture repairs the payloads that broke you.

Registered through the ``pytest11`` entry point, so installing Suture is enough::

    def test_interrupted_tool_call_is_repaired(assert_repairs):
        assert_repairs("payloads/interrupted.json", provider="anthropic", expect_rules=["TP001"])

``assert_repairs`` is also importable (``from proxy.pytest_plugin import assert_repairs``). The
``suture_payload`` fixture loads a payload the way ``suture check`` reads one, relative to the
test file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from sanitizer import Policy, SanitizeResult, Violation
from sanitizer.rules import RULES

from .commands._common import CommandError, examine, provider_of, repairable
from .payloads import Payload, PayloadError, detect_api, read_payload

__all__ = ["assert_repairs", "load_payload"]


def load_payload(source: str | Path | Mapping[str, Any], *, api: str | None = None) -> Payload:
    """A payload from a file (any form ``suture check`` reads) or from a body given as a dict."""
    if isinstance(source, Mapping):
        body = dict(source)
        if api is not None:
            return Payload(body=body, api=api, reason="given", form="request body", source="<body>")
        detected, reason = detect_api(body)
        return Payload(body=body, api=detected, reason=reason, form="request body", source="<body>")
    try:
        return read_payload(source, api=api)
    except PayloadError as exc:
        pytest.fail(f"suture: {exc}", pytrace=False)


def assert_repairs(
    payload: str | Path | Mapping[str, Any],
    *,
    provider: str | None = None,
    api: str | None = None,
    expect_rules: Iterable[str] | None = None,
    policy: Policy | Mapping[str, Any] | None = None,
) -> SanitizeResult:
    """Fail unless Suture's repair of ``payload`` is valid for ``provider``; return the repair.

    ``payload`` is a path (a request body, log line, HTTP dump, capture...) or a body. ``api``
    defaults to the one detected from the body. ``expect_rules`` pins the rules that must fire,
    by code or name (``["TP001"]``, ``["orphan-tool-call"]``): exactly those, no more, no fewer.
    """
    loaded = load_payload(payload, api=api)
    if isinstance(policy, Mapping):
        policy = Policy.from_mapping(dict(policy))
    # The same code path as `suture check --provider`: the same provider names, the same verdict.
    try:
        repairable(loaded)
        findings = examine(loaded, provider_of(loaded.api, provider), policy)
    except CommandError as exc:
        pytest.fail(str(exc), pytrace=False)
    if findings.shape_error is not None:
        pytest.fail(f"{loaded.source}: not a valid {loaded.api} body: {findings.shape_error}", pytrace=False)
    repaired = findings.repaired if findings.repaired is not None else loaded.body
    result = SanitizeResult(body=repaired, repairs=findings.repairs)
    problems = []
    if findings.remaining:
        problems.append(_still_invalid(loaded, findings.provider, findings.violations, findings.remaining, result))
    if expect_rules is not None:
        mismatch = _rules_mismatch(list(expect_rules), result)
        if mismatch:
            problems.append(mismatch)
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)
    return result


def _line(v: Violation) -> str:
    where = "request" if v.message_index is None else f"message {v.message_index}"
    return f"{v.rule} [{where}]: {v.message}"


def _still_invalid(
    payload: Payload, provider: str, before: list[Violation], after: list[Violation], result: SanitizeResult
) -> str:
    fixed = {_line(v) for v in before} - {_line(v) for v in after}
    lines = [f"{payload.source} ({payload.api}) is still invalid for {provider} after Suture's repair."]
    lines.append(f"Violations (- fixed by the repair, ! still there; {len(after)} left):")
    lines.extend(f"  - {line}" for line in sorted(fixed))
    lines.extend(f"  ! {_line(v)}" for v in after)
    applied = ", ".join(f"{r.code} {r.rule}" for r in result.repairs) or "none"
    lines.append(f"Repairs applied: {applied}")
    return "\n".join(lines)


def _rules_mismatch(expected: list[str], result: SanitizeResult) -> str | None:
    code_of = {rule.name: rule.code for rule in RULES}
    unknown = [e for e in expected if e not in code_of and e not in code_of.values()]
    if unknown:
        return f"expect_rules names no known rule: {', '.join(unknown)} (see `suture rules`)"
    want = {code_of.get(e, e) for e in expected}
    fired = {r.code for r in result.repairs}
    if want == fired:
        return None
    name_of = {rule.code: rule.name for rule in RULES}
    lines = ["The rules that fired differ from expect_rules:"]
    lines.extend(f"  - {code} {name_of.get(code, '')} (expected, did not fire)" for code in sorted(want - fired))
    lines.extend(f"  + {code} {name_of.get(code, '')} (fired, not expected)" for code in sorted(fired - want))
    lines.append(f"  expected: {sorted(want)}; fired: {sorted(fired)}")
    return "\n".join(lines)


@pytest.fixture(name="assert_repairs")
def _assert_repairs_fixture() -> Callable[..., SanitizeResult]:
    """:func:`assert_repairs`, as a fixture, so a test needs no import."""
    return assert_repairs


@pytest.fixture
def suture_payload(request: pytest.FixtureRequest) -> Callable[..., Payload]:
    """Load a payload by path, relative to the requesting test's file: ``suture_payload("x.json")``."""
    base = Path(request.path).parent

    def load(path: str | Path, *, api: str | None = None) -> Payload:
        target = Path(path)
        return load_payload(target if target.is_absolute() else base / target, api=api)

    return load
