from __future__ import annotations

import re

from .._ir import Transcript
from ..dialects.openai_responses import chained
from ..rules._base import Context
from ..validation._responses import R6
from ._strategy import Strategy
from ._target import Named

# R6's own template, its placeholder made a group: the id the server already holds.
_DUPLICATE = re.compile(re.escape(R6).replace(r"\{id\}", r"(\S+?)"))


class DropStoredDuplicate(Strategy):
    """
    What it repairs:
        An item of an OpenAI Responses request that continues a stored chain (a
        ``conversation``, or ``previous_response_id``) and that the server already holds: the
        agent replayed its last turn's items (a function call with its ``fc_`` id) into a
        conversation that had stored them (openai/openai-agents-python#1789, streamed runs with
        ``conversation_id``). The body holds one copy, so no rule sees a duplicate.

    Why:
        OpenAI: "Duplicate item found with id fc_68d25eda.... Remove duplicate items from your
        input and try again." Every retry of the turn gets the same answer.

    Example:
        Before: conversation "conv_1" / function_call (id fc_1, call_1) / function_call_output
                (call_1); refused naming fc_1
        After:  conversation "conv_1" / function_call_output (call_1)

    Safety:
        Drops only the item the refusal names, and only from a chained request, where the
        server says it holds the same id: the stored copy stays in the conversation (an output
        in the body still answers it there). The dropped item is kept in the repair record.
    """

    code = "RJ008"
    name = "drop-stored-duplicate"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api != "openai-responses" or not chained(transcript.body):
            return
        found = _DUPLICATE.search(target.message)
        if found is None:
            return
        item_id = found.group(1)
        named = [(e, p) for e, p in target.by_id if isinstance(p.raw, dict) and p.raw.get("id") == item_id]
        if len(named) != 1:
            return  # two copies in the body: duplicate-item-id's (RS005), not the server's
        entry, part = named[0]
        ctx.report(
            self,
            "dropped",
            entry,
            part.call_id,
            f"dropped item {item_id}, which the server already holds for the chain; "
            f"its payload was: {ctx.describe(part)}",
        )
        transcript.remove_parts([(entry, [part])])
