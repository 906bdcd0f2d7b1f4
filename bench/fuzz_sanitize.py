"""Coverage-guided fuzzing of the sanitizer's entry points with atheris (libFuzzer).

Run by hand (atheris is not a project dependency):

    .venv/bin/pip install atheris
    .venv/bin/python bench/fuzz_sanitize.py -max_total_time=300          # five minutes
    .venv/bin/python bench/fuzz_sanitize.py -jobs=2 -workers=2 -max_total_time=600
    .venv/bin/python bench/fuzz_sanitize.py crash-<sha1>                 # replay one input

The corpus lives in ``.fuzz/corpus`` (git-ignored) and is seeded from the ``before`` body of every
golden fixture under ``tests/sanitizer/golden``. Each input is JSON text, parsed the way the proxy
parses a request (orjson), then given to ``sanitize`` and ``validate`` for every API. A finding
is any exception other than ``SanitizeError`` from either, or a repaired body that the proxy
could not serialise, that still needs repairs when sanitized again, or an input that was mutated.
libFuzzer writes the input to ``crash-<sha1>`` in the current directory and stops.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

CORPUS = ROOT / ".fuzz" / "corpus"
GOLDEN = ROOT / "tests" / "sanitizer" / "golden"
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
    """The ``before`` body of every golden fixture, as JSON bytes."""
    out = []
    for path in sorted(GOLDEN.glob("*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out.append(json.dumps(doc["before"], ensure_ascii=False).encode())
    return out


def check_body(body: Any) -> None:
    """Run every entry point on one parsed body; raise AssertionError (or the crash) on a finding."""
    from sanitizer import APIS, PROVIDERS, SanitizeError, SanitizeResult, sanitize, validate

    pristine = copy.deepcopy(body)
    for api in APIS:
        try:
            result = sanitize(body, api=api)
        except SanitizeError:
            continue
        finally:
            assert body == pristine, f"{api}: sanitize mutated its input"
        assert isinstance(result, SanitizeResult), type(result)
        assert isinstance(result.body, dict), type(result.body)
        orjson.dumps(result.body)  # the proxy serialises the repaired body
        if result.repairs:
            again = sanitize(result.body, api=api)
            assert again.repairs == [], f"{api}: repairs did not settle: {again.repairs}"
    for api, providers in PROVIDERS.items():
        for provider in providers:
            with contextlib.suppress(SanitizeError):
                validate(body, api=api, provider=provider)
            assert body == pristine, f"{api}/{provider}: validate mutated its input"


def check_bytes(data: bytes) -> None:
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    check_body(body)


def _seed_corpus() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(seeds()):
        path = CORPUS / f"golden-{i:03d}.json"
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
