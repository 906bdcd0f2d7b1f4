from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, RESULT, TEXT, THINKING, Part, Transcript
from ..dialects.openai_responses import reasoning_model
from ._base import Context, Rule
from ._items import item_id, without_id

# Messages that open a new exchange: the model's items after one were produced by a later response.
_TURN_ROLES = frozenset({"user", "system", "developer"})


class CallIdWithoutReasoning(Rule):
    """
    What it repairs:
        An OpenAI Responses ``function_call`` replayed with its ``fc_`` item id, or an assistant
        answer with its ``msg_`` id, but without the reasoning item it was produced with, for a
        reasoning model (o-series, gpt-5, codex): a history store or memory window that keeps
        calls and answers and drops reasoning (Continue, continuedev/continue#11466), or
        reasoning dropped by dangling-reasoning or unstored-item; or one stored out of order,
        after the item it was produced with (Codex, openai/codex#33044).

    Why:
        The server links the call's item id to its reasoning item and wants both.
        OpenAI Responses: "Item 'fc_07d3...' of type 'function_call' was provided without its
        required 'reasoning' item: 'rs_07d3...'." and "Item 'msg_0ce2...' of type 'message' was
        provided without its required 'reasoning' item: 'rs_0ce2...'."

    Example:
        Before (gpt-5): user "search" / function_call call_1 (id fc_1) / output call_1 /
                user "next"
        After:  user "search" / function_call call_1 (no id) / output call_1 / user "next"

    Safety:
        Removes the item ``id`` only: ``call_id``, which pairs the call with its output, the
        name and the arguments stay, as does an answer's text, so the replayed item is read as
        plain input (what the OpenAI SDKs do when reasoning is not kept). Calls and answers after a
        reasoning item of their response (since the last user message or tool output) keep their
        ids; with previous_response_id, a conversation or an item_reference nothing is changed.
    """

    code = "RS003"
    name = "call-id-without-reasoning"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R4",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not reasoning_model(ctx.model) or ctx.dialect.history_still_elsewhere(transcript):
            return
        # Every item in order, with its place, so each can see the one after it.
        flat = [(entry, n, part) for entry in transcript.entries for n, part in enumerate(entry.parts)]
        reasoned = fresh = False
        for at, (entry, n, part) in enumerate(flat):
            if part.kind == THINKING:
                reasoned, fresh = True, False
            elif part.kind == TEXT and isinstance(part.raw, dict) and part.raw.get("role") in _TURN_ROLES:
                reasoned = fresh = False
            elif part.kind == RESULT:
                # The model's next item opens a new response: its reasoning, stored after it, is out of order.
                fresh = True
            elif (ident := _produced_id(part)) is not None and (
                not reasoned or (fresh and at + 1 < len(flat) and flat[at + 1][2].kind == THINKING)
            ):
                what = "a call" if part.kind == CALL else "an answer"
                ctx.report(
                    self,
                    "stripped",
                    entry,
                    part.call_id,
                    f"removed item id {ident!r} from {what} replayed without the reasoning item it was produced with",
                )
                entry.parts[n] = without_id(part)
                entry.dirty = True


def _produced_id(part: Part) -> str | None:
    """The server's id of a function call (``fc_``) or an assistant answer (``msg_``) a reasoning
    model produced, which the server links to the reasoning item before it."""
    raw = part.raw
    if not isinstance(raw, dict):
        return None
    ident = item_id(part)
    if part.kind == CALL and raw.get("type") == "function_call" and ident is not None and ident.startswith("fc_"):
        return ident
    if part.kind == TEXT and raw.get("role") == "assistant" and ident is not None and ident.startswith("msg_"):
        return ident
    return None
