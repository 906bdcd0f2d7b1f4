"""Fresh tool-call ids that are deterministic (prompt caches stay valid) and collide with nothing."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._ir import CALL, RESULT, SERVER_CALL, Part, Transcript

if TYPE_CHECKING:
    from ._base import Context, Repairer


def all_ids(transcript: Transcript) -> set[str]:
    return {p.call_id for _, p in transcript.parts() if p.call_id is not None}


class FreshIds:
    """Hands out ``base_2``, ``base_3``... the first one not in ``taken``, recording it there.

    ``taken`` only grows, so every suffix below the last one handed out for a base is still
    taken: the search resumes there, and renaming one id k times costs O(k), not O(k²).
    """

    def __init__(self, taken: set[str]) -> None:
        self._taken = taken
        self._next: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        n = self._next.get(base, 2)
        while f"{base}_{n}" in self._taken:
            n += 1
        self._next[base] = n + 1
        self._taken.add(f"{base}_{n}")
        return f"{base}_{n}"


def digest(value: str, length: int = 10) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def rewrite_ids(
    transcript: Transcript,
    ctx: Context,
    rule: Repairer,
    valid: re.Pattern[str],
    candidate: Callable[[str], str],
    kinds: frozenset[str] = frozenset({CALL, RESULT}),
    covers: Callable[[Part], bool] | None = None,
) -> None:
    """Give every call id that ``valid`` rejects a new one, in its call and all its results.

    ``candidate`` proposes an id for an original; a proposal that is taken (or invalid) gets a
    hash of the original folded in, so the mapping is deterministic and one-to-one. The new ids
    are recorded in ``ctx.restore_ids`` so the proxy can show the client its own ids again.
    ``kinds`` are the parts whose ids are checked (by default client tools' calls and results),
    ``covers`` a finer choice among them.
    """
    # Each id once (a call and its results share it), then the pattern: the ids of a long
    # transcript are read on every turn of a broken session.
    ids = {
        p.call_id
        for entry in transcript.entries
        for p in entry.parts
        if p.kind in kinds and p.call_id is not None and (covers is None or covers(p))
    }
    bad = {ident for ident in ids if not valid.match(ident)}
    if not bad:
        return
    taken = all_ids(transcript) - bad
    mapping: dict[str, str] = {}
    for original in sorted(bad):
        new = candidate(original)
        salt = 0
        while new in taken or not valid.match(new):
            salt += 1
            new = candidate(f"{original}\x00{salt}") if salt > 1 else candidate(original + "\x00")
        taken.add(new)
        mapping[original] = new
        # An id an earlier rule already renamed maps back to what the client sent.
        ctx.restore_ids[new] = ctx.restore_ids.pop(original, original)
    for entry in transcript.entries:
        for index, part in enumerate(entry.parts):
            if part.kind in kinds and part.call_id in mapping and (covers is None or covers(part)):
                new = mapping[part.call_id]
                if part.kind in (CALL, SERVER_CALL):
                    ctx.report(rule, "renamed", entry, part.call_id, f"tool id rewritten to {new!r}")
                entry.parts[index] = ctx.dialect.with_call_id(part, new)
                entry.dirty = True
