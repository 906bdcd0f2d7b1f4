from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, Entry, Transcript
from ..validation._bedrock import wants_tool_use_alone
from ._base import Context, Rule
from .an009_unsupported_prefill import CONTINUE_TEXT


class ToolUseWithText(Rule):
    """
    What it repairs:
        An assistant turn that holds text (or other blocks) next to its toolUse blocks, sent
        to a Bedrock model that takes tool uses only alone in their turn: Meta's Llama models,
        whose own answers, replayed, or a framework that merges a reply and its call into one
        turn, produce exactly that.

    Why:
        Bedrock Converse, Llama 3.2: "messages.7.content: Conversation blocks and tool use
        blocks cannot be provided in the same turn."

    Example:
        Before (model us.meta.llama3-2-11b-instruct-v1:0): user "weather?" / assistant
                [text "Let me check.", toolUse t1] / user [toolResult t1]
        After:  user "weather?" / assistant [text "Let me check."] / user [text "Continue."] /
                assistant [toolUse t1] / user [toolResult t1]

    Safety:
        Only for the models in the validator's TOOL_USE_ALONE_MODELS table (Claude and the
        others take text next to a toolUse, and their turns are left alone). Every block is
        kept: the rest of the turn first, in its order, then its tool uses, which stay right
        before their results; the user turn between them is one fixed word, so roles still
        alternate.
    """

    code = "BR004"
    looks_past_format = True
    name = "tool-use-with-text"
    apis = frozenset({"bedrock-converse"})
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B3",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Claude takes text next to its toolUse: only the model (in the URL) says this one does not.
        return not wants_tool_use_alone(ctx.model)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not wants_tool_use_alone(ctx.model):
            return
        entries: list[Entry] = []
        for entry in transcript.entries:
            calls = [p for p in entry.parts if p.kind == CALL]
            rest = [p for p in entry.parts if p.kind != CALL]
            if entry.role != "assistant" or not calls or not rest:
                entries.append(entry)
                continue
            ctx.report(self, "split", entry, None, f"moved {len(rest)} block(s) out of the tool use turn")
            entries.append(Entry("assistant", rest, entry.source, entry.origin, dirty=True))
            entries.append(ctx.dialect.text_entry("user", CONTINUE_TEXT))
            entries.append(Entry("assistant", calls, entry.source, entry.origin, dirty=True))
        transcript.entries = entries
