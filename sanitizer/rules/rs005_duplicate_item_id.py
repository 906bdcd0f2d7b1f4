from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Entry, Part, Transcript
from ._base import Context, Rule
from ._items import item_id, whole, without_id


class DuplicateItemId(Rule):
    """
    What it repairs:
        Two OpenAI Responses input items with the same item ``id``: history replayed twice
        (an agent SDK that sends items the conversation already holds, a merge of two
        histories), or a client that gives different items one id.

    Why:
        OpenAI Responses: "Duplicate item found with id fc_1. Remove duplicate items from your
        input and try again."

    Example:
        Before: user "go" / function_call call_1 (id fc_1) / output call_1 /
                function_call call_1 (id fc_1, the same item again) / output call_1
        After:  user "go" / function_call call_1 (id fc_1) / output call_1
                (duplicate-tool-result then takes the repeated output)
        Before: function_call call_1 (id fc_1) / output call_1 / function_call call_2 (id fc_1)
        After:  function_call call_1 (id fc_1) / output call_1 / function_call call_2 (no id)

    Safety:
        An item repeated verbatim is dropped (its first copy stays, so nothing is lost; the
        copy is in the repair record). A different item that repeats an id keeps its content
        and loses the id only. A reasoning item is the server's by its id, so a later one with
        the same id is dropped as a copy, never edited; its content is kept in the record.
    """

    code = "RS005"
    name = "duplicate-item-id"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R6",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        first: dict[str, Any] = {}
        removals: list[tuple[Entry, list[Part]]] = []
        for entry in transcript.entries:
            doomed: list[Part] = []
            for n, part in enumerate(entry.parts):
                ident = item_id(part)
                if ident is None:
                    continue
                if ident not in first:
                    first[ident] = part.raw
                elif part.raw == first[ident] or part.kind == THINKING:
                    doomed.append(part)
                    ctx.report(
                        self,
                        "dropped",
                        entry,
                        part.call_id,
                        f"removed a second item with id {ident!r}; the item was: {whole(part)}",
                    )
                else:
                    ctx.report(
                        self,
                        "stripped",
                        entry,
                        part.call_id,
                        f"removed id {ident!r} from an item that differs from the earlier item with that id",
                    )
                    entry.parts[n] = without_id(part)
                    entry.dirty = True
            if doomed:
                removals.append((entry, doomed))
        transcript.remove_parts(removals)
