from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ..validation._openai_chat import deepseek_reasoner
from ._base import Context, Rule
from ._runs import merge_runs


class ReasonerRoleRuns(Rule):
    """
    What it repairs:
        Two user or two assistant messages in a row, in a body for ``deepseek-reasoner``: a
        question whose answer was stopped and filtered out, followed by the next question; a
        request whose reply the client did not keep; an interrupted answer and the recovery
        message after it.

    Why:
        DeepSeek: "deepseek-reasoner does not support successive user or assistant messages
        (messages[2] and messages[3] in your input). You should interleave the user/assistant
        messages in the message sequence."

    Example:
        Before (model deepseek-reasoner): user "first question" / assistant "answer" /
                user "question whose answer was stopped" / user "new question"
        After:  user "first question" / assistant "answer" /
                user "question whose answer was stopped\\n\\nnew question"

    Safety:
        Merges each run into its first message, in order (texts joined by a blank line, tool
        calls kept); nothing is dropped. A later message that carries more than text and calls
        (its own reasoning_content, a prefix flag) is never merged, so its reasoning is never
        edited: a short message of the other role goes between the two instead ("Continue." for
        a user, the policy's bridge_text for an assistant). A system message between two
        messages of one role already separates them for DeepSeek and stays where it is.
    """

    code = "PV004"
    name = "reasoner-role-runs"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"deepseek"})
    fixes: ClassVar[tuple[str, ...]] = ("deepseek.D4",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return not deepseek_reasoner(body)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if deepseek_reasoner(transcript.body):
            transcript.entries = merge_runs(transcript.entries, ctx, self)
