"""The ``model`` label of Suture's metrics: the client's model name, from a bounded set.

A label value is a time series in Prometheus for as long as the server runs, and a model name
is whatever the client wrote: unbounded, it would let any client grow every scraper's memory.
The set is the exact names of the route table (``routes:``) plus the first
:data:`MAX_FIRST_SEEN` other names this process sees; everything else, and any name that is
too long or not made of the characters model names use, is ``other``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_FIRST_SEEN = 100
"""How many model names outside the route table get a label of their own, per process."""
MAX_NAME_LENGTH = 64
OTHER = "other"
# The longest name judged ``other`` that is remembered: a client's name may be as long as a body
# (30 names of 4 MiB would hold 120 MiB), and a long one is judged again by its length alone.
_REMEMBERED_LENGTH = 4 * MAX_NAME_LENGTH

# Providers' model names (gpt-4o-2024-08-06, claude-sonnet-4-5@20250929, models/gemini-2.5-pro,
# us.anthropic.claude-3-7-sonnet-20250219-v1:0, accounts/fireworks/models/llama-v3p1-8b-instruct).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*")
_GLOB = re.compile(r"[*?\[]")


class ModelLabels:
    """The label of a model name: itself when it is in the bounded set, else ``other``.

    A name is judged once; after that its label is one dict lookup (the request path)."""

    def __init__(self, known: Iterable[str] = (), max_first_seen: int = MAX_FIRST_SEEN) -> None:
        self._labels: dict[str | None, str] = {None: ""}
        for name in known:
            if not _GLOB.search(name) and self._fits(name):
                self._labels[name] = name
        self._room = max_first_seen

    def __call__(self, model: str | None) -> str:
        label = self._labels.get(model)
        if label is None:
            assert model is not None
            if self._room > 0 and self._fits(model):
                self._room -= 1
                label = model
            else:
                label = OTHER
            if label is not OTHER or (len(model) <= _REMEMBERED_LENGTH and len(self._labels) < 4 * MAX_FIRST_SEEN):
                # Short names judged `other` are remembered too, up to a bound (the set stays small).
                self._labels[model] = label
        return label

    @staticmethod
    def _fits(name: str) -> bool:
        return len(name) <= MAX_NAME_LENGTH and _NAME.fullmatch(name) is not None
