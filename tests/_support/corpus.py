"""Real transcripts that a provider rejected, collected from public issue threads and pull requests.

Each case is one JSON file under ``tests/corpus/cases/<provider>/``; :func:`load_cases` reads them and
:func:`judge` runs one through the validator and the sanitizer. ``python -m tests.corpus`` prints
the table per provider. The format of a case::

    {
      "source": "https://github.com/OWNER/REPO/issues/N",  # where the failure was reported
      "agent": "LangGraph 0.2",              # the software that built the transcript
      "provider": "anthropic",               # where the request was bound (a name sanitize() takes)
      "api": "anthropic-messages",           # its wire format
      "model": "gemini-3-pro-preview",       # optional: the model, where the URL names it, not the body
      "error": {"status": 400, "message": "the provider's exact text, as quoted in the source"},
      "wording": "current",                  # or why the source's text differs from today's
      "reconstructed": "what of the body the source did not show, and how it was filled in",
      "body": {...},                         # the request body, as faithful as the source allows
      "must_survive": ["texts that the repaired body must still hold: user texts, tool outputs"],
      "unrepairable": null,                  # or why no repair can exist (data that was lost)
      "xfail": null                          # or why Suture does not pass this case yet
    }
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sanitizer import SANITIZE_PROVIDERS, SanitizeError, sanitize, validate, validator_provider

CASES = Path(__file__).resolve().parent.parent / "corpus" / "cases"
_FIELDS = {
    "source",
    "agent",
    "provider",
    "api",
    "model",
    "error",
    "wording",
    "reconstructed",
    "body",
    "must_survive",
    "unrepairable",
    "xfail",
}


@dataclass(frozen=True)
class Case:
    path: Path
    data: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def provider(self) -> str:
        return str(self.data["provider"])

    @property
    def api(self) -> str:
        return str(self.data["api"])


@dataclass(frozen=True)
class Verdict:
    """What Suture makes of one case."""

    reports_exact_text: bool
    """``validate()`` on the original body names the provider's own message, word for word."""
    reports_same_text: bool
    """...or the same words, as :func:`same_text` compares them."""
    first_violation: str | None
    repaired_valid: bool
    """After ``sanitize()``, the body passes the validator for its provider."""
    lost: list[str]
    """``must_survive`` texts the repaired body no longer holds."""
    remaining: list[str]


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES.glob("*/*.json")):
        data = orjson.loads(path.read_bytes())
        unknown = set(data) - _FIELDS
        missing = {"source", "provider", "api", "error", "body", "must_survive"} - set(data)
        if unknown or missing:
            raise ValueError(f"{path}: unknown fields {sorted(unknown)}, missing {sorted(missing)}")
        if data["provider"] not in SANITIZE_PROVIDERS.get(data["api"], ()):
            raise ValueError(f"{path}: {data['provider']!r} is not a provider sanitize() takes for {data['api']}")
        cases.append(Case(path, data))
    return cases


# What a gateway wraps around the provider's text, which is the text the validator reports; only
# the wrapper goes, never the provider's words:
# - One-API / New-API relays append " (request id: ...)" once per hop (PROVIDER_RULES.md W3):
#   gemini/openai-compat-sageread-call-after-model-text (one hop), openai/morphic-relay-orphan-tool
#   (four hops).
_RELAY_REQUEST_IDS = re.compile(r"(?:\s*\(request id: [^()]*\))+\s*$")


def same_text(expected: str, reported: str) -> bool:
    """The provider's text as a thread quotes it and as the validator writes it: the same words,
    with backticks and spacing (which threads lose in Markdown), a gateway's prefix and a relay's
    request-id suffixes not counted."""
    a, b = _words(_RELAY_REQUEST_IDS.sub("", expected)), _words(reported)
    return a == b or a.endswith(b) or b.endswith(a)


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split()).rstrip(".").lower()


def judge(case: Case) -> Verdict:
    api, provider = case.api, case.provider
    bound_for = provider if provider in SANITIZE_PROVIDERS.get(api, ()) else None
    checked_as = validator_provider(api, provider)
    body = case.data["body"]
    expected = case.data["error"]["message"]
    model = case.data.get("model")
    try:
        found = validate(body, api=api, provider=checked_as, model=model)
    except SanitizeError as exc:
        # A body the core takes for the wrong shape is a case it does not recognise.
        return Verdict(False, False, f"shape error: {exc}", False, list(case.data["must_survive"]), [str(exc)])
    exact = any(v.message == expected for v in found)
    same = exact or any(same_text(expected, v.message) for v in found)
    try:
        repaired = sanitize(body, api=api, provider=bound_for, model=model).body
    except SanitizeError as exc:
        return Verdict(exact, same, found[0].message if found else None, False, [], [f"shape error: {exc}"])
    remaining = validate(repaired, api=api, provider=checked_as, model=model)
    text = orjson.dumps(repaired).decode()
    lost = [s for s in case.data["must_survive"] if orjson.dumps(s).decode()[1:-1] not in text]
    return Verdict(
        reports_exact_text=exact,
        reports_same_text=same,
        first_violation=found[0].message if found else None,
        repaired_valid=not remaining,
        lost=lost,
        remaining=[f"{v.rule}: {v.message}" for v in remaining],
    )
