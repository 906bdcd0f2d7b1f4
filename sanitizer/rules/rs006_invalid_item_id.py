from __future__ import annotations

from typing import ClassVar

from .._ir import THINKING, Entry, Part, Transcript
from ..dialects.openai_responses import misnamed_item_id, stored_reasoning
from ._base import Context, Rule
from ._items import whole, without_id


class InvalidItemId(Rule):
    """
    What it repairs:
        An OpenAI Responses input item whose ``id`` OpenAI cannot take: the empty string (a
        client that kept a reasoning item's encrypted content but lost its id, an SDK that
        serialises a required id even when it is blank), an id with other characters than
        letters, digits, ``_`` and ``-`` (one a gateway made up), or an id without the prefix
        OpenAI gives that kind of item (``msg`` for a message, ``fc`` for a function call,
        ``rs`` for reasoning): the Agents SDK's ``__fake_id__`` on items it built itself.

    Why:
        OpenAI Responses (and Azure): "Invalid 'input[2].id': ''. Expected an ID that contains
        letters, numbers, underscores, or dashes, but this value contained additional
        characters." (microsoft/agent-framework-go#783, anomalyco/opencode#25065)
        "Invalid 'input[1].id': '__fake_id__'. Expected an ID that begins with 'msg'."
        (openai/openai-agents-python#2293)

    Example:
        Before: user "hi" / reasoning (id "", encrypted_content "gAAA...") / function_call
                call_1 / output call_1
        After:  user "hi" / reasoning (no id, encrypted_content "gAAA...") / function_call
                call_1 / output call_1
        Before: user "hi" / reasoning (id "", no encrypted_content) / assistant "hello"
        After:  user "hi" / assistant "hello"

    Safety:
        Removes the ``id`` field only: the item, its content and its ``call_id`` stay. An item
        without an id is one the server takes as sent (encrypted reasoning is read from its
        ``encrypted_content``, as Codex sends it; bound for Azure, which wants the id,
        reasoning-without-id then removes it). A reasoning item with neither a usable id nor
        encrypted content is one the server can neither look up nor read, so it is removed, and
        kept whole in the repair record. A valid id is never touched.
    """

    code = "RS006"
    name = "invalid-item-id"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R10", "responses.R12")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        removals: list[tuple[Entry, list[Part]]] = []
        for entry in transcript.entries:
            doomed: list[Part] = []
            for n, part in enumerate(entry.parts):
                if not misnamed_item_id(part.raw):
                    continue
                ident = part.raw["id"]
                if part.kind == THINKING and stored_reasoning(part.raw):
                    doomed.append(part)
                    ctx.report(
                        self,
                        "dropped",
                        entry,
                        None,
                        f"removed a reasoning item with the id {ident!r} and no encrypted content, "
                        f"which the server can neither look up nor read; the item was: {whole(part)}",
                    )
                    continue
                ctx.report(self, "stripped", entry, part.call_id, f"removed the id {ident!r}, which OpenAI refuses")
                entry.parts[n] = without_id(part)
                entry.dirty = True
            if doomed:
                removals.append((entry, doomed))
        transcript.remove_parts(removals)
