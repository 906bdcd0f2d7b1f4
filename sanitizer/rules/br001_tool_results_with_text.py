from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Entry, Transcript
from ._base import Context, Rule


class ToolResultsWithText(Rule):
    """
    What it repairs:
        A user turn that holds tool results together with text or other blocks: the
        framework put the user's next words, or an interrupt note, into the results turn.

    Why:
        Bedrock Converse: "messages.2.content: Conversation blocks and tool result blocks
        cannot be provided in the same turn."
        Mistral, behind a gateway that turns the results into tool messages and the text into
        a user message after them: "Unexpected role 'user' after role 'tool'"

    Example:
        Before: assistant toolUse t1 / user [toolResult t1, text "thanks, now summarize"]
        After:  assistant toolUse t1 / user [toolResult t1] / user [text "thanks, now summarize"]
                (consecutive-same-role then puts a short assistant bridge between the two)

    Safety:
        Splits the turn; every block is kept, results first, the rest in its order.
    """

    code = "BR001"
    name = "tool-results-with-text"
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B3",)
    apis = frozenset({"bedrock-converse"})
    also_for = frozenset({("anthropic-messages", "mistral")})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of an Anthropic body bound for Mistral (in Converse it is one of the format's own).
        return ctx.api == "anthropic-messages" and not any(
            m.get("role") == "user"
            and type(m["content"]) is list
            and any(type(b) is dict and b.get("type") == "tool_result" for b in m["content"])
            and any(type(b) is not dict or b.get("type") != "tool_result" for b in m["content"])
            for m in body["messages"]
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries: list[Entry] = []
        for entry in transcript.entries:
            results = [p for p in entry.parts if p.kind == RESULT]
            rest = [p for p in entry.parts if p.kind != RESULT]
            if entry.role != "user" or not results or not rest:
                entries.append(entry)
                continue
            ctx.report(self, "split", entry, None, f"moved {len(rest)} block(s) out of the tool results turn")
            entries.append(Entry("user", results, entry.source, entry.origin, dirty=True))
            entries.append(Entry("user", rest, entry.source, entry.origin, dirty=True))
        transcript.entries = entries
