from __future__ import annotations

from typing import Any

from .._ir import OTHER, SERVER_CALL, SERVER_RESULT, THINKING, Entry, Part, Transcript
from ..rules._base import Context
from ._strategy import Strategy
from ._target import Named, blank

_SERVER_SIDE = frozenset({SERVER_CALL, SERVER_RESULT})


class DropNamedScaffolding(Strategy):
    """
    What it repairs:
        A block (or an OpenAI Responses item) the provider names that is the model's own
        scaffolding: a thinking or reasoning block, a server tool's call or result (web search,
        code execution...), a hosted tool's call item, or an empty text block.

    Why:
        Providers tighten what they take back, per model and per version, e.g.
        "messages.1.content.0: thinking blocks cannot be sent to this model" or
        "Item 'ws_1' of type 'web_search_call' was provided without its required following item."

    Example:
        Before: assistant [thinking "...", text "Done."]; refused naming messages.1.content.0
        After: assistant [text "Done."]

    Safety:
        Drops only what the model wrote for itself, which the next turn can do without: never
        a text with words in it, a client tool's call or result, or anything of the user's.
        A server tool's call goes with its result, and the reverse.
    """

    code = "RJ003"
    name = "drop-named-scaffolding"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        candidates = [(target.entry, target.part)] if target.entry is not None and target.part is not None else []
        candidates += target.by_id
        doomed: dict[int, tuple[Entry, Part]] = {}
        for entry, part in candidates:
            if entry is None or not _scaffolding(entry, part, ctx.api):
                continue
            doomed[id(part)] = (entry, part)
            if part.kind in _SERVER_SIDE:
                # A server tool's call and its result stand or fall together.
                for other_entry, other in transcript.parts():
                    if other.kind in _SERVER_SIDE and other.call_id == part.call_id:
                        doomed[id(other)] = (other_entry, other)
        if not doomed:
            return
        removals: dict[int, tuple[Entry, list[Part]]] = {}
        for entry, part in doomed.values():
            removals.setdefault(id(entry), (entry, []))[1].append(part)
            ctx.report(self, "dropped", entry, part.call_id, f"dropped the {_kind(part)} the provider refused")
        transcript.remove_parts(removals.values())


def _scaffolding(entry: Entry, part: Part, api: str) -> bool:
    if entry.role == "user" and part.kind not in _SERVER_SIDE:
        return blank(part) and len(entry.parts) > 1
    if part.kind in (THINKING, *_SERVER_SIDE) or blank(part):
        return True
    # Responses' hosted tools leave items of their own (web_search_call, file_search_call...).
    kind = _type(part.raw)
    return api == "openai-responses" and part.kind == OTHER and kind.endswith("_call")


def _type(raw: Any) -> str:
    kind = raw.get("type") if isinstance(raw, dict) else None
    return kind if isinstance(kind, str) else ""


def _kind(part: Part) -> str:
    kind = _type(part.raw)
    return f"{kind} block" if kind else f"{part.kind} block"
