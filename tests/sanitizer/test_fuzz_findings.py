"""Inputs ``bench/fuzz_sanitize.py`` found, kept as they were found (JSON text, mangled by the
fuzzer): one pass of ``sanitize`` must settle them, as the fuzzer's own check requires. One that
is not fixed yet is a strict xfail, with what is known of it."""

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
    body = orjson.loads(path.read_bytes())
    first = sanitize(body, api="openai-responses")
    assert first.repairs
    assert sanitize(first.body, api="openai-responses").repairs == []
