from __future__ import annotations

from typing import ClassVar

from .._ir import THINKING, Entry, Part, Transcript
from ..dialects.openai_responses import follows_reasoning
from ._base import Context, Rule
from ._items import item_id, whole


class DanglingReasoning(Rule):
    """
    What it repairs:
        An OpenAI Responses ``reasoning`` item that is not followed by the item it produced: its
        function call or assistant message was dropped (by the client's history trimming, or by
        orphan-tool-call's drop policy), the run was cut off after the model thought, or the
        item after it was replayed without its item id while the reasoning is a stored one
        (an ``id`` and no ``encrypted_content``), which the server pairs with its item by id.

    Why:
        OpenAI Responses: "Item 'rs_1' of type 'reasoning' was provided without its required
        following item."

    Example:
        Before: user "hi" / reasoning rs_1 / user "are you there?"
        After:  user "hi" / user "are you there?"
        Before: user "count the r's" / reasoning rs_1 / assistant "3" (no id) / user "thanks"
        After:  user "count the r's" / assistant "3" / user "thanks"

    Safety:
        Removes the reasoning item only: the model's words and calls after it stay. Nothing
        else can make the request valid (the item it produced is gone, or cannot be named), and
        the whole reasoning item (its summary, its encrypted content) is kept in the repair
        record's detail. Runs after the pairing rules, so whatever they dropped or answered is
        seen; a reasoning item the server can still pair is never touched.
    """

    code = "RS001"
    name = "dangling-reasoning"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R3",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        flat = [(entry, part) for entry in transcript.entries for part in entry.parts]
        doomed: dict[int, tuple[Entry, list[Part]]] = {}
        # A reasoning item that follows a dropped one was followed by it, so it is dangling too:
        # one pass sees every item that goes.
        for n, (entry, part) in enumerate(flat):
            if part.kind != THINKING or item_id(part) is None:
                continue
            following = flat[n + 1][1].raw if n + 1 < len(flat) else None
            if follows_reasoning(part.raw, following):
                continue
            doomed.setdefault(id(entry), (entry, []))[1].append(part)
            ctx.report(
                self,
                "dropped",
                entry,
                None,
                f"removed reasoning item {item_id(part)!r}, which no item it produced follows; "
                f"the item was: {whole(part)}",
            )
        transcript.remove_parts(doomed.values())
