from __future__ import annotations

from typing import ClassVar

from .._ir import TEXT, Part, Transcript
from ._base import Context, Rule


class PrefillTrailingWhitespace(Rule):
    """
    What it repairs:
        A request that ends on an assistant message (a prefill, or a partial answer sent back
        to be continued) whose text ends in whitespace: the trailing newline of a stored
        partial answer, a prefill typed with a space at the end.

    Why:
        Anthropic: "messages: final assistant content cannot end with trailing whitespace"

    Example:
        Before: user "Continue the story." / assistant "Once upon a time\\n"
        After:  user "Continue the story." / assistant "Once upon a time"

    Safety:
        Strips the whitespace at the end of the final message's last text block, and nothing
        else: the removed characters are named in the repair record, thinking blocks and
        every earlier message are untouched.
    """

    code = "AN008"
    name = "prefill-trailing-whitespace"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A8",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not transcript.entries or transcript.entries[-1].role != "assistant":
            return
        entry = transcript.entries[-1]
        part = entry.parts[-1] if entry.parts else None
        if part is None or part.kind != TEXT:
            return
        text = part.raw if isinstance(part.raw, str) else part.raw.get("text")
        # Blank text is blank-text-block's to drop; this rule trims text that says something.
        if not isinstance(text, str) or not text.strip() or not text[-1].isspace():
            return
        kept = text.rstrip()
        entry.parts[-1] = Part(TEXT, kept if isinstance(part.raw, str) else {**part.raw, "text": kept})
        entry.dirty = True
        ctx.report(
            self,
            "trimmed",
            entry,
            None,
            f"removed trailing whitespace {text[len(kept) :]!r} from the final assistant message",
        )
