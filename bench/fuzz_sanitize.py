"""Coverage-guided fuzzing of the sanitizer's entry points with atheris (libFuzzer).

Run by hand (atheris is not a project dependency):

    .venv/bin/pip install atheris
    .venv/bin/python bench/fuzz_sanitize.py -max_total_time=300          # five minutes
    .venv/bin/python bench/fuzz_sanitize.py -jobs=2 -workers=2 -max_total_time=600
    .venv/bin/python bench/fuzz_sanitize.py crash-<sha1>                 # replay one input

The corpus lives in ``.fuzz/corpus`` (git-ignored) and is seeded from the ``before`` body of every
golden fixture under ``tests/sanitizer/golden`` and the body of every corpus case. Each input is
JSON text, parsed the way the proxy parses a request (orjson), then given to ``sanitize`` (for
every API, with no provider and with one the input picks, under one of the pairing policies) and
to ``validate``. A finding is any exception other than ``SanitizeError`` from either, or a
repaired body that the proxy could not serialise, that still needs repairs when sanitized again,
that differs from what the full pass (every rule applied, none skipped on the quick look's word)
makes, or an input that was mutated.
libFuzzer writes the input to ``crash-<sha1>`` in the current directory and stops.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sys
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

CORPUS = ROOT / ".fuzz" / "corpus"
GOLDEN = ROOT / "tests" / "sanitizer" / "golden"
CASES = ROOT / "tests" / "corpus" / "cases"
# Tokens libFuzzer splices into inputs: the words the dialects branch on.
DICTIONARY = [
    '"role"',
    '"user"',
    '"assistant"',
    '"tool"',
    '"system"',
    '"developer"',
    '"content"',
    '"messages"',
    '"tool_calls"',
    '"tool_call_id"',
    '"function"',
    '"arguments"',
    '"name"',
    '"id"',
    '"type"',
    '"text"',
    '"tool_use"',
    '"tool_result"',
    '"tool_use_id"',
    '"input"',
    '"thinking"',
    '"redacted_thinking"',
    '"server_tool_use"',
    '"web_search_tool_result"',
    '"tools"',
    '"tool_choice"',
    '"is_error"',
    '"signature"',
    '"image"',
    '"source"',
    '"cache_control"',
    '"model"',
    '"max_tokens"',
    '"stream"',
    '"functions.ls:0"',
    "null",
    "true",
    "false",
    "[]",
    "{}",
    '""',
    '" "',
    "0",
    "-1",
    "1e999",
]


def seeds() -> list[bytes]:
    """The ``before`` body of every golden fixture and the body of every corpus case, as JSON bytes."""
    out = []
    for path in sorted(GOLDEN.glob("*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append(json.dumps(doc["before"], ensure_ascii=False).encode())
    for path in sorted(CASES.glob("*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append(json.dumps(doc["body"], ensure_ascii=False).encode())
    return out


def check_body(body: Any, pick: int = 0) -> None:
    """Run every entry point on one parsed body; raise AssertionError (or the crash) on a finding.

    ``pick`` (a hash of the input) chooses, for each API, one provider and one policy besides the
    defaults, so every input also exercises a provider's own rules at little cost."""
    from sanitizer import APIS, PROVIDERS, SANITIZE_PROVIDERS, Policy, SanitizeError, SanitizeResult, sanitize, validate

    policies = (Policy(), Policy(orphan_tool_call="drop"), Policy(orphan_tool_result="drop"))
    pristine = copy.deepcopy(body)
    for api in APIS:
        bound = SANITIZE_PROVIDERS[api]
        for provider, policy in ((None, policies[0]), (bound[pick % len(bound)], policies[pick // 7 % 3])):
            where = f"{api}/{provider}/{policy}"
            try:
                result = sanitize(body, api=api, provider=provider, policy=policy)
            except SanitizeError:
                continue
            finally:
                assert body == pristine, f"{where}: sanitize mutated its input"
            assert isinstance(result, SanitizeResult), type(result)
            assert isinstance(result.body, dict), type(result.body)
            orjson.dumps(result.body)  # the proxy serialises the repaired body
            try:
                full = full_pass(body, api=api, provider=provider, policy=policy)
            except SanitizeError:
                pass  # a body only the full pass reads, and refuses: the quick look let it go on as sent
            else:
                same = (full.repairs, full.body) == (result.repairs, result.body)
                assert same, f"{where}: the quick look skipped a repair"
            if result.repairs:
                again = sanitize(result.body, api=api, provider=provider, policy=policy)
                assert again.repairs == [], f"{where}: repairs did not settle: {again.repairs}"
    for api, providers in PROVIDERS.items():
        for provider in providers:
            with contextlib.suppress(SanitizeError):
                validate(body, api=api, provider=provider)
            assert body == pristine, f"{api}/{provider}: validate mutated its input"


def full_pass(body: Any, **kw: Any) -> Any:
    """``sanitize`` with every rule applied from the first: no quick look, no rule skipped."""
    from sanitizer import sanitize
    from sanitizer.dialects import DIALECTS

    dialect = DIALECTS[kw["api"]]
    dialect.suspects = lambda body: None  # type: ignore[method-assign]
    try:
        return sanitize(body, **kw)
    finally:
        del dialect.suspects


def check_bytes(data: bytes) -> None:
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    check_body(body, zlib.crc32(data))


def _seed_corpus() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(seeds()):
        path = CORPUS / f"seed-{i:03d}.json"
        if not path.exists():
            path.write_bytes(seed)


def main() -> None:
    import atheris

    args = list(sys.argv)
    replay = [a for a in args[1:] if not a.startswith("-") and Path(a).is_file()]
    if not replay and not any(not a.startswith("-") for a in args[1:]):
        _seed_corpus()
        args.append(str(CORPUS))
    if not any(a.startswith("-dict=") for a in args):
        dict_path = ROOT / ".fuzz" / "json.dict"
        dict_path.parent.mkdir(parents=True, exist_ok=True)
        dict_path.write_text("".join(f"{json.dumps(tok)}\n" for tok in DICTIONARY), encoding="utf-8")
        args.append(f"-dict={dict_path}")
    with atheris.instrument_imports(include=["sanitizer"]):
        import sanitizer  # noqa: F401
    atheris.Setup(args, check_bytes)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
