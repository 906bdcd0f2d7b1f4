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
        # Plain loops, one pass to index: this runs on every turn of a broken session, whose
        # transcript can hold thousands of messages.
        entries = transcript.entries
        callers: list[int] = []
        found: dict[str | None, list[int]] = {}
        for index, entry in enumerate(entries):
            calling = False
            for part in entry.parts:
                if part.kind == RESULT:
                    positions = found.get(part.call_id)
                    if positions is None:
                        found[part.call_id] = [index]
                    else:
                        positions.append(index)
                elif part.kind == CALL:
                    calling = True
            if calling:
                callers.append(index)
        # Reordering happens only between a caller and the next caller, so every caller keeps
        # its index and each span can be judged from the positions found up front.
        for n, i in enumerate(callers):
            limit = callers[n + 1] if n + 1 < len(callers) else len(entries)
            calls = {p.call_id for p in entries[i].parts if p.kind == CALL}
            last = -1
            for call_id in calls:
                for j in found.get(call_id, ()):
                    if last < j < limit:
                        last = j
            if last <= i:
                continue
            span = entries[i + 1 : last + 1]
            answers = [any(p.kind == RESULT and p.call_id in calls for p in e.parts) for e in span]
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
