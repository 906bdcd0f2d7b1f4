from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, OTHER, TEXT, THINKING, Entry, Part, Transcript
from ..validation._convert import reasoning_text
from ._base import Context, Rule
from ._items import whole


class ReasoningWithoutAnswer(Rule):
    """
    What it repairs:
        An OpenAI Responses ``reasoning`` item with text (a summary, or reasoning content) that
        no call or assistant message follows, in a body LiteLLM bridges to Mistral: reasoning
        replayed before the user's next message, after the last tool output, or at the end of
        the input, or moved there by interposed-message. The bridge gives each such item an
        assistant message of its own, with its text as ``reasoning_content`` and no content.

    Why:
        Mistral: "Assistant message must have either content or tool_calls, but not none."

    Example:
        Before (bound for Mistral): user "list the files" / call ls / output "src tests" /
                reasoning "The tests are in tests/." / user "only the tests"
        After:  user "list the files" / call ls / output "src tests" / user "only the tests"

    Safety:
        Removes the reasoning item only, and keeps it whole in the repair record. Mistral never
        reads reasoning that stands alone (LiteLLM gives it a turn's reasoning only next to the
        turn's content or calls), as thinking-only-turn says of Anthropic's thinking. Reasoning
        followed by a call or an answer, which the bridge puts on that message, is never
        touched, nor is reasoning without text, of which the bridge makes nothing.
    """

    code = "RS010"
    name = "reasoning-without-answer"
    apis = frozenset()
    also_for = frozenset({("openai-responses", "mistral")})
    fixes: ClassVar[tuple[str, ...]] = ("mistral.M5",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # looks_clean passes no body that holds a reasoning item.
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # The items in order, as the bridge reads them; a run of reasoning waits for the next
        # item that makes a message, and goes to it if that is the assistant's.
        doomed: dict[int, tuple[Entry, list[Part]]] = {}
        waiting: list[tuple[Entry, Part]] = []

        def alone() -> None:
            for owner, reasoning in waiting:
                doomed.setdefault(id(owner), (owner, []))[1].append(reasoning)
                ctx.report(
                    self,
                    "dropped",
                    owner,
                    None,
                    "removed a reasoning item that no call or assistant message follows, which LiteLLM "
                    f"would send Mistral as an assistant message without content; the item was: {whole(reasoning)}",
                )

        for entry, part in transcript.parts():
            if part.kind == THINKING:
                if reasoning_text(part.raw):
                    waiting.append((entry, part))
                continue
            if part.kind == OTHER:
                continue  # an item the bridge makes no message of
            if not (part.kind == CALL or (part.kind == TEXT and entry.role == "assistant")):
                alone()
            waiting = []
        alone()
        transcript.remove_parts(doomed.values())
