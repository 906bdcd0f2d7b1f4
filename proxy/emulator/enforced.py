"""Other providers' rules enforced on the emulator's own OpenAI Chat route: an upstream Suture has
no profile for.

Agents reach servers through OpenAI-compatible URLs no list names, and each enforces its own
subset of the rules Suture knows under other providers' names. ``suture emulate --enforce`` makes
the emulator such a server: it refuses what those rules refuse, with their texts, all of them in
one answer, one per line, as a schema-validating server (pydantic's) lists every error it found.
"""

from __future__ import annotations

from typing import Any

from sanitizer import validate
from sanitizer.providers import TABLE
from sanitizer.validation._registry import REGISTRY

_API = "openai-chat"


def enforceable() -> tuple[str, ...]:
    """The violation codes of the OpenAI-compatible providers other than OpenAI (``groq.X5``,
    ``fireworks.extra-input``...): what their own Chat endpoints refuse that OpenAI's takes."""
    # Bedrock's codes are of its Converse API, which LiteLLM's translation of a Chat body meets.
    compatible = {b.provider for b in TABLE[_API] if b.profile == b.provider} - {"openai", "bedrock"}
    return tuple(
        code for code, entry in REGISTRY.items() if code.split(".")[0] in compatible and "openai" not in entry.providers
    )


def check_codes(codes: tuple[str, ...]) -> tuple[str, ...]:
    """``codes``, or ValueError naming those no provider's OpenAI Chat profile enforces."""
    known = set(enforceable())
    unknown = [c for c in codes if c not in known]
    if unknown:
        raise ValueError(f"--enforce: unknown code(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return codes


def refusal(body: dict[str, Any], codes: tuple[str, ...], model: str | None) -> tuple[int, str] | None:
    """The status and text (every enforced violation, one per line) for ``body``, or None."""
    found: dict[str, tuple[int, str]] = {}
    for code in codes:
        provider = code.split(".")[0]
        for violation in validate(body, api=_API, provider=provider, model=model):
            if violation.rule == code and code not in found:
                found[code] = (violation.status, violation.message)
    if not found:
        return None
    statuses = {status for status, _ in found.values()}
    return (statuses.pop() if len(statuses) == 1 else 400), "\n".join(text for _, text in found.values())
