"""Thinking: whether a request turns it on, and where thinking blocks go when a repair merges or
reorders an assistant turn."""

from __future__ import annotations

from typing import Any

from .._ir import THINKING, Part

THINKING_ON = ("enabled", "adaptive")
"""The ``thinking.type`` values that turn Claude's thinking on: manual extended thinking, and
adaptive thinking (whose round-trip rules are "identical", platform.claude.com, Thinking in tool
and multi-turn workflows)."""


def thinking_manual(thinking: Any) -> bool:
    """Whether a request's ``thinking`` value turns manual extended thinking on (``enabled``): the
    model thinks before every turn, so a turn without thinking is history that lost it. Adaptive
    thinking lets the model skip a turn's thinking: a turn without it is the model's own, which the
    API takes (Claude Code on Opus 4.8 sends such turns on every tool loop)."""
    return isinstance(thinking, dict) and thinking.get("type") == "enabled"


def thinking_on(thinking: Any) -> bool:
    """Whether a request's ``thinking`` value turns thinking on."""
    return isinstance(thinking, dict) and thinking.get("type") in THINKING_ON


def thinking_first(parts: list[Part]) -> list[Part] | None:
    """``parts`` with their first run of thinking blocks moved to the front, or ``None`` if it is there.

    Claude rejects an assistant message that holds thinking but starts with anything else
    ("If an assistant message contains any thinking blocks, the first block must be thinking or
    redacted_thinking"). The blocks are moved, never edited or split, and everything else keeps
    its order: a text written before a merged-in thinking turn lands right after its thinking.
    """
    start = next((n for n, p in enumerate(parts) if p.kind == THINKING), None)
    if start is None or start == 0:
        return None
    end = start
    while end < len(parts) and parts[end].kind == THINKING:
        end += 1
    return parts[start:end] + parts[:start] + parts[end:]
