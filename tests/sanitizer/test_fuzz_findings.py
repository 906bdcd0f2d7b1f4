"""Inputs ``bench/fuzz_sanitize.py`` found: one pass of ``sanitize`` must settle them, as the
fuzzer's own check requires. A file is a Responses body kept as it was found (JSON text, mangled
by the fuzzer), or a minimized one with the format and provider it fails for
(``{"api", "provider", "body"}``). One that is not fixed yet is a strict xfail, with what is known
of it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from sanitizer import sanitize

FINDINGS = Path(__file__).parent / "fuzz_findings"
OPEN: dict[str, str] = {}


def _cases() -> list[object]:
    return [
        pytest.param(path, id=path.stem, marks=[pytest.mark.xfail(strict=True, reason=OPEN[path.stem])])
        if path.stem in OPEN
        else pytest.param(path, id=path.stem)
        for path in sorted(FINDINGS.glob("*.json"))
    ]


@pytest.mark.parametrize("path", _cases())
def test_one_pass_settles_a_fuzzer_finding(path: Path) -> None:
    data = orjson.loads(path.read_bytes())
    if "body" in data and "api" in data:
        body, api, provider = data["body"], data["api"], data.get("provider")
    else:
        body, api, provider = data, "openai-responses", None
    first = sanitize(body, api=api, provider=provider)
    assert first.repairs
    assert sanitize(first.body, api=api, provider=provider).repairs == []
