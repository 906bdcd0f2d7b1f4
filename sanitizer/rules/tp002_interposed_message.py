from __future__ import annotations

from .._ir import CALL, RESULT, Transcript
from ._base import Context, Rule


class InterposedMessage(Rule):
    """
    What it repairs:
        Messages that sit between an assistant's tool calls and the results that answer them:
        an interrupt-recovery assistant message ("I noticed that you have interrupted me.
        What can I do for you?"), a system or developer reminder, the user's next text.

    Why:
        Results must come right after their calls.
        OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages
        responding to each 'tool_call_id'. The following tool_call_ids did not have response
        messages: call_1"
        Anthropic: "messages.1: `tool_use` ids were found without `tool_result` blocks
        immediately after: toolu_1. ..."

    Example:
        Before: assistant calls get_weather (call_1) / assistant "I noticed that you have
                interrupted me..." / user "never mind" / tool result for call_1
        After:  assistant calls get_weather / tool result for call_1 /
                assistant "I noticed..." / user "never mind"

    Safety:
        Nothing is dropped; the moved messages keep their order. Only messages without tool
        calls of their own are moved: a result that sits beyond a later tool-calling turn is
        moved back by misplaced-tool-result instead.
    """

    code = "TP002"
    name = "interposed-message"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # Plain loops: this runs on every turn of a broken session, whose transcript can hold
        # thousands of messages. Each span from a caller to the next is read once, so the whole
        # transcript is read once.
        entries = transcript.entries
        callers: list[int] = []
        for index, entry in enumerate(entries):
            for part in entry.parts:
                if part.kind == CALL:
                    callers.append(index)
                    break
        # Reordering happens only between a caller and the next caller, so every caller keeps
        # its index.
        for n, i in enumerate(callers):
            limit = callers[n + 1] if n + 1 < len(callers) else len(entries)
            calls = {p.call_id for p in entries[i].parts if p.kind == CALL}
            answers: list[bool] = []
            last = -1
            for j in range(i + 1, limit):
                answer = False
                for part in entries[j].parts:
                    if part.kind == RESULT and part.call_id in calls:
                        answer = True
                        break
                answers.append(answer)
                if answer:
                    last = j
            if last <= i:
                continue
            span = entries[i + 1 : last + 1]
            answers = answers[: last - i]
            if all(answers):
                continue
            # ``last`` holds a result, so every message that answers none of the calls sat before one.
            carriers = [e for e, answer in zip(span, answers, strict=True) if answer]
            others = [e for e, answer in zip(span, answers, strict=True) if not answer]
            entries[i + 1 : last + 1] = carriers + others
            for entry in others:
                ctx.report(
                    self,
                    "moved",
                    entry,
                    None,
                    f"{entry.role} message sat between the tool calls of message "
                    f"{entries[i].origin} and their results; moved after the results",
                )
