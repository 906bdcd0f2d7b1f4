from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Transcript
from ..dialects.anthropic_messages import THINKING_BLOCKS
from ._base import Context, Rule, quoted_content


class ThinkingOnlyTurn(Rule):
    """
    What it repairs:
        An assistant message that holds thinking blocks and nothing else, in an Anthropic body
        bound for OpenAI or Mistral through LiteLLM's adapter: a turn interrupted right after
        its thinking, or one whose answer a client cut. The adapter turns the thinking into
        ``reasoning_content`` and, with no text and no tool call left, sends ``content: null``.

    Why:
        OpenAI: "Invalid value for 'content': expected a string, got null."
        Mistral: "Assistant message must have either content or tool_calls, but not none."

    Example:
        Before: user "plan the migration" / assistant [thinking] / user "go on"
        After:  user "plan the migration" / user "go on"

    Safety:
        The model never saw that thinking: OpenAI takes no reasoning back, and LiteLLM gives
        Mistral a turn's reasoning only next to its content or tool calls. The turn is removed
        and its thinking blocks kept, verbatim, in the repair record. Turns with text or tool
        calls next to their thinking are left alone.
    """

    code = "AN017"
    name = "thinking-only-turn"
    apis = frozenset()
    also_for = frozenset({("anthropic-messages", "openai"), ("anthropic-messages", "mistral")})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O6", "mistral.M5")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return not any(
            m.get("role") == "assistant"
            and type(m["content"]) is list
            and m["content"]
            and all(type(block) is dict and block.get("type") in THINKING_BLOCKS for block in m["content"])
            for m in body["messages"]
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        kept = []
        for entry in transcript.entries:
            if entry.role == "assistant" and entry.parts and all(p.kind == THINKING for p in entry.parts):
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    None,
                    f"removed an assistant message that held only thinking, which the Chat provider would get "
                    f"as content null; it held: {quoted_content(entry)}",
                )
                continue
            kept.append(entry)
        transcript.entries = kept
