"""Bodies a client gets wrong: one field damaged, or the transcript's messages reshaped.

Seeded, so a failing case names the seed that made it.
"""

from __future__ import annotations

import copy
import random
from typing import Any

TRANSCRIPT_KEYS = ("messages", "input", "contents")

# Values a client gets wrong in a field: absent, null, of another type, empty, unhashable, too long.
DAMAGE: tuple[Any, ...] = (None, 5, [], {}, "x", "", ["a"], {"type": 5}, [{"id": 1}], "call_" + "x" * 45)


# Fields the formats' parsers and quick checks read.
FIELDS = (
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "id",
    "type",
    "call_id",
    "input",
    "tool_use_id",
    "parts",
    "functionCall",
    "toolUse",
    "reasoning_content",
    "function_call",
)


def damaged(body: Any, seed: int) -> Any:
    """``body`` with one field anywhere in its transcript removed, given a wrong value, or added
    with a wrong value where it does not belong."""
    rng = random.Random(seed)
    damaged = copy.deepcopy(body)
    objects: list[dict[str, Any]] = []
    pending = [damaged.get(key) for key in TRANSCRIPT_KEYS if isinstance(damaged, dict)]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            objects += [node] if node else []
            pending += node.values()
        elif isinstance(node, list):
            pending += node
    if objects:
        target = rng.choice(objects)
        how = rng.random()
        if how < 0.25:
            del target[rng.choice(sorted(target))]
        elif how < 0.5:
            # A field the formats read, where it does not belong (tool_calls on a user message).
            target[rng.choice(FIELDS)] = rng.choice(DAMAGE)
        else:
            target[rng.choice(sorted(target))] = rng.choice(DAMAGE)
    return damaged


def reshaped(body: Any, seed: int) -> Any:
    """``body`` with one message of its transcript copied, dropped, swapped with another or moved:
    what a framework's history handling does to a transcript (a replay, a trim, a reorder)."""
    rng = random.Random(seed)
    reshaped = copy.deepcopy(body)
    items = next((reshaped[k] for k in TRANSCRIPT_KEYS if isinstance(reshaped.get(k), list)), None)
    if not items or len(items) < 2:
        return reshaped
    i, j = rng.randrange(len(items)), rng.randrange(len(items))
    how = rng.randrange(4)
    if how == 0:
        items.insert(j, copy.deepcopy(items[i]))
    elif how == 1:
        del items[i]
    elif how == 2:
        items[i], items[j] = items[j], items[i]
    else:
        items.insert(j, items.pop(i))
    return reshaped
