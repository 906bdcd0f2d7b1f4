"""The messages and parts of a parsed transcript that a refusal's reading names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._ir import TEXT, Entry, Part, Transcript
from ._reading import Reading

_BLOCKS = {"gemini": "parts"}


@dataclass(slots=True)
class Named:
    """What the refusal points at: a message, a part of it, parts carrying a named id."""

    entry: Entry | None
    part: Part | None
    by_id: list[tuple[Entry, Part]]
    message: str = ""
    """The refusal's text."""


def named(transcript: Transcript, api: str, reading: Reading) -> Named:
    entry = part = None
    if reading.message_index is not None:
        entry = next((e for e in transcript.entries if e.origin == reading.message_index), None)
        if entry is not None:
            part = _named_part(transcript, api, entry, reading)
        if part is None and api == "openai-responses":
            # A Responses item is a part of its own, and an entry's origin is its first item: the
            # second call of a parallel group is named by an index no entry starts at.
            items = transcript.body.get(transcript.key)
            raw = items[reading.message_index] if isinstance(items, list) else None
            entry, part = next(((e, p) for e, p in transcript.parts() if p.raw is raw), (entry, None))
    ids = set(reading.ids)
    by_id = [(e, p) for e, p in transcript.parts() if p.call_id in ids or _item_id(p.raw) in ids]
    return Named(entry, part, by_id, reading.message)


def _named_part(transcript: Transcript, api: str, entry: Entry, reading: Reading) -> Part | None:
    items = transcript.body.get(transcript.key)
    assert isinstance(items, list)
    raw = items[entry.origin] if entry.origin is not None else None
    if reading.block_index is None:
        # An OpenAI Responses item is a part of its own: the index names it.
        return next((p for p in entry.parts if p.raw is raw), None) if api == "openai-responses" else None
    if not isinstance(raw, dict):
        return None
    key = "tool_calls" if reading.block_is_call else _BLOCKS.get(api, "content")
    blocks = raw.get(key)
    if isinstance(blocks, str) and reading.block_index == 0:
        return next((p for p in entry.parts if p.kind == TEXT), None)
    if not isinstance(blocks, list) or reading.block_index >= len(blocks):
        return None
    block = blocks[reading.block_index]
    return next((p for p in entry.parts if p.raw is block), None)


def _item_id(raw: Any) -> str | None:
    value = raw.get("id") if isinstance(raw, dict) else None
    return value if isinstance(value, str) else None


def blank(part: Part) -> bool:
    """A text part with nothing but whitespace in it."""
    if part.kind != TEXT:
        return False
    raw = part.raw
    text = raw if isinstance(raw, str) else raw.get("text") if isinstance(raw, dict) else None
    return isinstance(text, str) and not text.strip()
