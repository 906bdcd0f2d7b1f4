"""Fresh tool-call ids that are deterministic (prompt caches stay valid) and collide with nothing."""

from __future__ import annotations

import hashlib

from .._ir import Transcript


def all_ids(transcript: Transcript) -> set[str]:
    return {p.call_id for _, p in transcript.parts() if p.call_id is not None}


def fresh_id(base: str, taken: set[str]) -> str:
    """``base_2``, ``base_3``... the first one not in ``taken``; recorded in ``taken``."""
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    taken.add(f"{base}_{n}")
    return f"{base}_{n}"


def digest(value: str, length: int = 10) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:length]
