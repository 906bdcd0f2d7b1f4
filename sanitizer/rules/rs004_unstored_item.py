from __future__ import annotations

from typing import ClassVar

from .._ir import OTHER, THINKING, Part, Transcript
from ..dialects.openai_responses import stored_reasoning
from ._base import Context, Rule
from ._items import item_id, whole


class UnstoredItem(Rule):
    """
    What it repairs:
        With ``store: false``, OpenAI Responses items that only the server's store could
        resolve: a ``reasoning`` item replayed by id without its ``encrypted_content`` (the
        client did not ask for ``include: ["reasoning.encrypted_content"]``), and
        ``item_reference`` items.

    Why:
        With ``store: false`` nothing was kept to look them up. OpenAI Responses (HTTP 404):
        "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false.
        Try again with `store` set to true, or remove this item from your input."

    Example:
        Before (store false): user "hi" / reasoning rs_1 (no encrypted_content) /
                assistant "hello" / user "more"
        After:  user "hi" / assistant "hello" / user "more"

    Safety:
        Removes those items only, as the error asks; what they held (the reasoning's summary,
        the referenced id) is kept in the repair record's detail. A reasoning item with its
        encrypted content is never touched; with ``store`` true or unset nothing is.
    """

    code = "RS004"
    name = "unstored-item"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R5",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if transcript.body.get("store") is not False:
            return
        self.drop_parts(
            transcript,
            ctx,
            frozenset({THINKING, OTHER}),
            lambda part: item_id(part) is not None and _unresolvable(part),
            lambda part: (
                f"removed item {item_id(part)!r}, which the server cannot look up with store false; "
                f"the item was: {whole(part)}"
            ),
        )


def _unresolvable(part: Part) -> bool:
    if part.kind == THINKING:
        return stored_reasoning(part.raw)
    return part.kind == OTHER and part.raw.get("type") == "item_reference"
