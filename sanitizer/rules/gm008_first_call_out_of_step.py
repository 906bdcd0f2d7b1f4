from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Entry, Transcript
from ..dialects.gemini import first_call_index
from ..validation._gemini import turns_by_position
from ._base import Context, Rule
from .gm002_call_turn_without_user_turn import LEAD_IN_TEXT


class FirstCallOutOfStep(Rule):
    """
    What it repairs:
        For a Gemini 1 model, a first function-call turn that stands at an even index in
        ``contents``: two user contents in a row before it (a human-in-the-loop graph that adds
        the user's feedback as a message of its own, or a history whose empty model turn was
        dropped between two user turns), or a history that opens with the model's greeting.

    Why:
        Gemini 1 tells user turns from model turns by their position before the first call,
        not by their role, and answers: "Please ensure that function call turn comes
        immediately after a user turn or after a function response turn."
        (langchain-ai/langchain-academy#28, firebase/firebase-ios-sdk#13685)

    Example:
        Before (model gemini-1.5-flash): user "Multiply pi by three" / user "Use 3.14." /
                model functionCall multiply / user functionResponse multiply
        After:  user ["Multiply pi by three", "Use 3.14."] / model functionCall multiply /
                user functionResponse multiply
        Before (model gemini-1.5-flash): model "Hi! Ask me about rates." / user "50 USD in
                SEK?" / model functionCall getExchangeRate / function functionResponse
        After:  user "(Conversation continues.)" / model "Hi! Ask me about rates." / user "50
                USD in SEK?" / model functionCall getExchangeRate / function functionResponse

    Safety:
        Only the contents before the first call change. Contents of one role in a row there are
        merged, their parts kept in order (a content holding function responses is never merged,
        so no text joins them); if the history then opens with a model turn, one short user turn
        with fixed text is put first, as call-turn-without-user-turn does. Nothing is dropped.
        Only for Gemini 1 models, named by the URL: Gemini 3 reads roles, and nothing shows
        Gemini 2 reading positions.
    """

    code = "GM008"
    name = "first-call-out-of-step"
    looks_past_format = True
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G1",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # A body looks_clean passed alternates from a user turn to its first call unless a run of
        # one role shifts it; only the model says whether that matters.
        first = first_call_index(body)
        return not turns_by_position(ctx.model) or first is None or first % 2 == 1

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not turns_by_position(ctx.model):
            return
        entries = transcript.entries
        first = next((i for i, e in enumerate(entries) if e.role == "assistant" and e.calls()), None)
        # A call with no user turn right before it is call-turn-without-user-turn's, which ran first.
        if first is None or first % 2 == 1 or entries[first - 1].role != "user":
            return
        before: list[Entry] = []
        for entry in entries[:first]:
            previous = before[-1] if before else None
            if previous is None or previous.role != entry.role or _answers(previous) or _answers(entry):
                before.append(entry)
                continue
            previous.parts = previous.parts + entry.parts
            previous.dirty = True
            role = "model" if entry.role == "assistant" else "user"
            ctx.report(self, "merged", entry, None, f"merged into the {role} content before it")
        if len(before) % 2 == 0 and before[0].role == "assistant":
            before.insert(0, ctx.dialect.text_entry("user", LEAD_IN_TEXT))
            ctx.report(self, "inserted", before[1], None, "put a short user turn before the model's first turn")
        transcript.entries = before + entries[first:]


def _answers(entry: Entry) -> bool:
    return any(p.kind == RESULT for p in entry.parts)
