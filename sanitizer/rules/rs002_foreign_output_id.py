from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Transcript
from ..dialects.openai_responses import foreign_output_id
from ._base import Context, Rule
from ._items import item_id, without_id


class ForeignOutputId(Rule):
    """
    What it repairs:
        An OpenAI Responses ``function_call_output`` (or ``custom_tool_call_output``) that
        carries an item ``id`` which is not an output item id (``fco_...``, ``ctco_...``): a
        client that set ``id`` to the call id, or to an id of its own.

    Why:
        The server does not count such an item as the call's output, and answers as if the
        output were missing. OpenAI Responses: "No tool output found for function call
        call_XXX." (tjardoo/openai-client PR#124: with ``id`` omitted the same request works.)

    Example:
        Before: previous_response_id resp_1 / function_call_output call_XXX (id "call_XXX")
        After:  previous_response_id resp_1 / function_call_output call_XXX (no id)

    Safety:
        Removes the ``id`` field only; the output, its ``call_id`` (what pairs it with its
        call) and everything else stay as they were. An output item id (``fco_``) is kept.
    """

    code = "RS002"
    name = "foreign-output-id"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R1",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != RESULT or not foreign_output_id(part.raw):
                    continue
                ctx.report(
                    self,
                    "stripped",
                    entry,
                    part.call_id,
                    f"removed id {item_id(part)!r}, which is not an output item id, from the output",
                )
                entry.parts[n] = without_id(part)
                entry.dirty = True
