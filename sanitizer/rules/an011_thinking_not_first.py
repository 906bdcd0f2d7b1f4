from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, THINKING, Transcript
from ._base import Context, Rule
from ._thinking import thinking_first, thinking_on


class ThinkingNotFirst(Rule):
    """
    What it repairs:
        An assistant turn that holds thinking blocks but does not start with one: a message
        stored as [text, thinking, tool_use], or, with thinking enabled, an assistant text
        message right before the thinking message of the last tool round, which the API
        merges with it into one turn that starts with text. Moving an interrupt-recovery
        message after the results it sat in front of (interposed-message) can leave that
        second shape.

    Why:
        Anthropic: "If an assistant message contains any thinking blocks, the first block must
        be thinking or redacted_thinking. Found text." and, for the last tool round,
        "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found
        `text`. When `thinking` is enabled, a final `assistant` message must start with a
        thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).
        ..."

    Example:
        Before: assistant [text "Let me look.", thinking, tool_use toolu_1]
        After:  assistant [thinking, text "Let me look.", tool_use toolu_1]
        Before (thinking enabled): assistant "Sorry, go on." / assistant [thinking,
                tool_use toolu_2] / user [tool_result toolu_2]
        After:  assistant [thinking, text "Sorry, go on.", tool_use toolu_2] /
                user [tool_result toolu_2]

    Safety:
        Moves the first run of thinking blocks to the front of its turn; thinking blocks are
        never edited, split or dropped, and every other block keeps its order. The merge
        joins only messages the API merges anyway. A turn with no thinking block at all is
        left alone: thinking that was lost cannot be made up (thinking-without-history turns
        thinking off for such a request instead).
    """

    code = "AN011"
    name = "thinking-not-first"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.thinking-first", "anthropic.A13")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            # One part is in order whatever it is: most messages, asked on every turn.
            if entry.role != "assistant" or len(entry.parts) < 2:
                continue
            reordered = thinking_first(entry.parts)
            if reordered is not None:
                entry.parts = reordered
                entry.dirty = True
                ctx.report(self, "moved", entry, None, "moved the message's thinking blocks to its front")
        if thinking_on(transcript.body.get("thinking")):
            self._merge_last_round(transcript, ctx)

    def _merge_last_round(self, transcript: Transcript, ctx: Context) -> None:
        # The last tool round: the closing user turn holds results, and the assistant messages
        # before it are one turn to the API, which must start with thinking.
        entries = transcript.entries
        end = len(entries)
        while end and entries[end - 1].role == "user":
            end -= 1
        if end == len(entries) or not any(p.kind == RESULT for e in entries[end:] for p in e.parts):
            return
        start = end
        while start and entries[start - 1].role == "assistant":
            start -= 1
        run = entries[start:end]
        if len(run) < 2 or run[0].has(THINKING) or not any(e.has(THINKING) for e in run):
            return
        head = run[0]
        where = "" if head.origin is None else f" (message {head.origin})"
        for entry in run[1:]:
            ctx.report(
                self,
                "merged",
                entry,
                None,
                f"merged into the assistant message before it{where}, so that the turn starts with its thinking",
            )
        merged = [p for e in run for p in e.parts]
        head.parts = thinking_first(merged) or merged
        head.dirty = True
        transcript.entries = [*entries[:start], head, *entries[end:]]
