from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, TEXT, THINKING, Entry, Transcript
from ._base import Context, Rule
from ._items import item_id


class AnswerAfterItsCalls(Rule):
    """
    What it repairs:
        A reasoning model's answer (an assistant message with its ``msg_`` id) replayed after
        the function calls of its own response, where the model wrote it before them: a client
        that stores a turn's text and calls apart and rebuilds the turn as reasoning, calls,
        text (Continue before PR#12018, continuedev/continue#11994).

    Why:
        The server links the answer's id to the reasoning item right before it, and finds a
        call there instead. OpenAI Responses: "Item 'msg_...' was provided without its
        required 'reasoning' item: 'rs_...'."

    Example:
        Before (o3-mini): user "read the file" / reasoning rs_1 / function_call call_1 (fc_1) /
                message msg_1 "Let me read it." / output call_1 / user "next"
        After:  user "read the file" / reasoning rs_1 / message msg_1 "Let me read it." /
                function_call call_1 (fc_1) / output call_1 / user "next"

    Safety:
        Only the model's own items of one response change places, back to the order the model
        wrote them in (reasoning, text, calls), as Continue's fix sends them; nothing is
        removed, every id is kept, and the outputs still follow the calls. A message after an
        output, or a model that does not reason, is left to the other rules.
    """

    code = "RS009"
    name = "answer-after-its-calls"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R4",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        rebuilt: list[Entry] = []
        index = 0
        while index < len(entries):
            turn = entries[index]
            index += 1
            rebuilt.append(turn)
            if turn.role != "assistant" or not _reasoning_then_calls(turn):
                continue
            answers: list[Entry] = []
            while index < len(entries) and _is_answer(entries[index]):
                answers.append(entries[index])
                index += 1
            if not answers:
                continue
            # The reasoning leads the answers; the calls follow them, as the model wrote them.
            rebuilt.pop()
            reasoning = [p for p in turn.parts if p.kind == THINKING]
            answers[0].parts = reasoning + answers[0].parts
            answers[0].dirty = True
            turn.parts = [p for p in turn.parts if p.kind != THINKING]
            turn.dirty = True
            rebuilt += [*answers, turn]
            for answer in answers:
                ctx.report(
                    self,
                    "moved",
                    answer,
                    None,
                    f"moved the answer {item_id(answer.parts[-1])!r} before the calls of its response, "
                    "right after the reasoning it was produced with",
                )
        transcript.entries = rebuilt


def _reasoning_then_calls(turn: Entry) -> bool:
    """A response's reasoning followed by its calls: reasoning first, then calls only."""
    kinds = [p.kind for p in turn.parts]
    first_call = next((n for n, kind in enumerate(kinds) if kind != THINKING), 0)
    return first_call > 0 and all(kind == CALL for kind in kinds[first_call:])


def _is_answer(entry: Entry) -> bool:
    """An assistant message with the ``msg_`` id of a response (not one the client wrote)."""
    if entry.role != "assistant" or not entry.parts:
        return False
    part = entry.parts[-1]
    ident = item_id(part) if part.kind == TEXT else None
    return ident is not None and ident.startswith("msg_") and all(p.kind == TEXT for p in entry.parts)
