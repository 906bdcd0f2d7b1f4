from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, RESULT, Entry, Part, Transcript
from .._placement import attach_results
from ..dialects._base import pinned_by_thinking
from ._base import Context, Rule


class OrphanToolCall(Rule):
    """
    What it repairs:
        A tool call that no result answers anywhere in the transcript: the agent was
        interrupted after the model asked for a tool and before the tool ran (the seed
        reports: AgentScope appends "I noticed that you have interrupted me..." and the
        user's next message instead of a result).

    Why:
        Every later request is rejected, so the session is dead for good.
        Anthropic: "messages.1: `tool_use` ids were found without `tool_result` blocks
        immediately after: tc_slow_1. Each `tool_use` block must have a corresponding
        `tool_result` block in the next message."
        OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages
        responding to each 'tool_call_id'. The following tool_call_ids did not have response
        messages: tc_slow_1"

    Example:
        Before: user "call slow_tool" / assistant calls slow_tool (tc_slow_1) /
                assistant "I noticed that you have interrupted me..." / user "stop, answer 42"
        After (policy pair): the same, with a synthetic error result for tc_slow_1 right after
                the call, so the recovery message and the correction follow the result.
        After (policy drop): the call is removed; an assistant message left empty goes too.

    Safety:
        pair adds a result that says the truth (interrupted before a result came back, may
        have partly run) and drops nothing. drop removes the unexecuted call but keeps the
        message's text; it never strips a call from an Anthropic or Bedrock message with
        thinking blocks (their signature covers the call), which is paired instead. In OpenAI
        Responses the reasoning items that led only to the dropped call go with it. Calls in the last message are
        left alone when trailing_tool_call is "leave".
    """

    code = "TP001"
    name = "orphan-tool-call"
    fixes: ClassVar[tuple[str, ...]] = (
        "openai.O1",
        "anthropic.A1",
        "responses.R1",
        "gemini.G3",
        "bedrock.B1",
        "deepseek.D1",
        "mistral.M2",
        "minimax.X3",
        "dashscope.X2",
    )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        # Plain loops, one pass: this runs on every turn of a broken session.
        answered: set[str | None] = set()
        callers: list[tuple[int, Entry]] = []
        for index, entry in enumerate(entries):
            calling = False
            for part in entry.parts:
                if part.kind == RESULT:
                    answered.add(part.call_id)
                elif part.kind == CALL:
                    calling = True
            if calling:
                callers.append((index, entry))
        owners = [
            (index, entry)
            for index, entry in callers
            if any(p.kind == CALL and p.call_id not in answered for p in entry.parts)
        ]
        tail = _results_tail(entries, ctx.dialect.result_role)
        drops: list[tuple[Entry, list[Part]]] = []
        pairs: list[tuple[Entry, list[Part]]] = []
        for index, owner in reversed(owners):
            orphans = [p for p in owner.parts if p.kind == CALL and p.call_id not in answered]
            # Nothing but tool results follows the owner: the client may still be sending results.
            if ctx.policy.trailing_tool_call == "leave" and index + 1 >= tail:
                continue
            if ctx.policy.orphan_tool_call == "drop" and not pinned_by_thinking(ctx.dialect, owner):
                drops.append((owner, self._drop(owner, orphans, ctx)))
            else:
                pairs.append((owner, self._pair(owner, orphans, ctx)))
        # Drops go first: a message the drop empties leaves, and the zone of the message before it
        # may then reach further, as it did when each owner was repaired in turn from the last.
        transcript.remove_parts(drops)
        attach_results(transcript, ctx.dialect, pairs)

    def _pair(self, owner: Entry, orphans: list[Part], ctx: Context) -> list[Part]:
        kept_for_thinking = ctx.policy.orphan_tool_call == "drop"
        synthetic = []
        for call in orphans:
            assert call.call_id is not None
            text = ctx.policy.synthetic_text(name=call.name or "", call_id=call.call_id)
            synthetic.append(ctx.dialect.synthetic_result(call, text))
            why = (
                "; not dropped because the message carries thinking blocks whose signature covers the call"
                if kept_for_thinking
                else ""
            )
            ctx.report(
                self,
                "synthesized",
                owner,
                call.call_id,
                f"answered unanswered call to {call.name!r} with a synthetic error result{why}",
            )
        return synthetic

    def _drop(self, owner: Entry, orphans: list[Part], ctx: Context) -> list[Part]:
        for call in orphans:
            ctx.report(
                self,
                "dropped",
                owner,
                call.call_id,
                f"removed unexecuted call to {call.name!r} with arguments {ctx.describe(call)}",
            )
        return ctx.dialect.droppable(owner, orphans)


def _results_tail(entries: list[Entry], role: str) -> int:
    """Where the transcript's closing run of messages holding nothing but tool results starts."""
    start = len(entries)
    while start and entries[start - 1].role == role and all(p.kind == RESULT for p in entries[start - 1].parts):
        start -= 1
    return start
