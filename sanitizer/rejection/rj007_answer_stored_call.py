from __future__ import annotations

import re

from .._ir import RESULT, Entry, Part, Transcript
from ..dialects.openai_responses import chained
from ..rules._base import Context
from ..validation._responses import R1
from ._strategy import Strategy
from ._target import Named

# R1's own template, its placeholders made groups: the kind of call and its id.
_UNANSWERED = re.compile(
    re.escape(R1).replace(r"\{what\}", "(function call|custom tool call)").replace(r"\{id\}", r"(\S+?)") + "$"
)
_OUTPUT_OF = {"function call": "function_call_output", "custom tool call": "custom_tool_call_output"}


class AnswerStoredCall(Strategy):
    """
    What it repairs:
        An OpenAI Responses request that continues a stored chain (``previous_response_id``, or
        a ``conversation``) whose last response called a tool that was never answered: the
        agent was interrupted while the call ran, and its next turn sends only the user's
        words (Codex CLI, openai/codex#394). The call lives on the server, so no rule can see
        it; the refusal names it.

    Why:
        OpenAI: "No tool output found for function call call_F8pwMPCgihaegOtcP0Sj5VOj." Every
        later turn of the chain gets the same answer.

    Example:
        Before: previous_response_id "resp_1" / user "Retry gh"; refused naming call_7
        After: previous_response_id "resp_1" / function_call_output (call_7) "...interrupted..." /
               user "Retry gh"

    Safety:
        Adds one output, with the policy's synthetic result text, at the start of ``input``,
        where the outputs of the previous response's calls go; removes nothing. Only for a call
        the body does not hold (one it holds is answer-named-call's).
    """

    code = "RJ007"
    name = "answer-stored-call"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api != "openai-responses" or not chained(transcript.body):
            return
        found = _UNANSWERED.search(target.message.strip())
        if found is None:
            return
        kind, call_id = found.groups()
        if any(p.call_id == call_id for _, p in transcript.parts()):
            return
        item = {
            "type": _OUTPUT_OF[kind],
            "call_id": call_id,
            "output": ctx.policy.synthetic_text(name="", call_id=call_id),
        }
        output = Entry("tool", [Part(RESULT, item, call_id)], item, None, dirty=True)
        transcript.entries.insert(0, output)
        ctx.report(
            self,
            "synthesized",
            None,
            call_id,
            f"answered the {kind} of the stored response that the provider named as unanswered with a synthetic "
            "error result at the start of input",
        )
