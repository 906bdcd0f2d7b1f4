"""Item ids and whole items of OpenAI Responses, for the RS rules."""

from __future__ import annotations

import json

from .._ir import THINKING, Entry, Part
from ..validation._convert import reasoning_text


def item_id(part: Part) -> str | None:
    """The item's own ``id`` (``rs_``, ``fc_``, ``msg_``...), if it has one."""
    ident = part.raw.get("id") if isinstance(part.raw, dict) else None
    return ident if isinstance(ident, str) and ident else None


def without_id(part: Part) -> Part:
    return Part(part.kind, {k: v for k, v in part.raw.items() if k != "id"}, part.call_id, part.name)


def whole(part: Part) -> str:
    """The whole item as compact JSON, so a dropped item survives in the repair record."""
    return json.dumps(part.raw, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def no_bridged_message(entry: Entry, api: str) -> bool:
    """A Responses entry of reasoning items without text. LiteLLM's Responses bridge makes no Chat
    message of it (a reasoning item with text becomes one, with no content, where no assistant
    message follows to take it), so a rule that judges the bridged body's message order must look
    past it."""
    return (
        api == "openai-responses"
        and bool(entry.parts)
        and all(p.kind == THINKING and not reasoning_text(p.raw) for p in entry.parts)
    )
