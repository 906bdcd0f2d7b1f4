from __future__ import annotations

from .._ir import CALL, RESULT, Entry, Part, Transcript
from .._placement import attach_results
from ..rules._base import Context
from ._strategy import Strategy
from ._target import Named


class AnswerNamedCall(Strategy):
    """
    What it repairs:
        A tool call the provider names as unanswered, which no result in the body answers,
        although the rules left it (the last message's calls with trailing_tool_call "leave",
        or a provider counting results its own way).

    Why:
        The provider refuses every later turn until the call is answered, e.g. "messages.1:
        `tool_use` ids were found without `tool_result` blocks immediately after: toolu_9".

    Example:
        Before: assistant calls lookup (toolu_9) / user "go on"; refused naming toolu_9
        After: assistant calls lookup (toolu_9) / user [synthetic error result for toolu_9, "go on"]

    Safety:
        Adds a result that says the call was interrupted; removes nothing.
    """

    code = "RJ001"
    name = "answer-named-call"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        answered = {p.call_id for _, p in transcript.parts() if p.kind == RESULT}
        pending: dict[int, tuple[Entry, list[Part]]] = {}
        for entry, part in target.by_id:
            if part.kind != CALL or part.call_id in answered or part.call_id is None:
                continue
            answered.add(part.call_id)
            text = ctx.policy.synthetic_text(name=part.name or "", call_id=part.call_id)
            pending.setdefault(id(entry), (entry, []))[1].append(ctx.dialect.synthetic_result(part, text))
            ctx.report(
                self,
                "synthesized",
                entry,
                part.call_id,
                f"answered the call to {part.name!r} the provider named as unanswered with a synthetic error result",
            )
        attach_results(transcript, ctx.dialect, list(pending.values()))
