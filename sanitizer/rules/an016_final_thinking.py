from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, SERVER_CALL, THINKING, Entry, Part, Transcript
from ._base import Context, Rule
from ._thinking import thinking_on
from .an009_unsupported_prefill import CONTINUE_TEXT


class FinalThinking(Rule):
    """
    What it repairs:
        A final assistant message that Anthropic refuses for its thinking blocks: one that ends
        in a thinking block (a turn interrupted right after its thinking and stored as it was),
        or one that holds thinking blocks while the request has thinking disabled (a client
        that turned thinking off mid-conversation, or a model switch). Policy
        ``trailing_thinking``.

    Why:
        Anthropic: "The final block in an assistant message cannot be `thinking`." and
        "When thinking is disabled, an `assistant` message in the final position cannot
        contain `thinking`."

    Example:
        Before (thinking enabled): user "plan the migration" / assistant [thinking]
        After (policy continue): user "plan the migration" / assistant [thinking] /
                user "Continue."
        After (policy drop): user "plan the migration"
        Before (thinking disabled): user "hi" / assistant [thinking, text "Hello"]
        After (policy drop): user "hi" / assistant [text "Hello"]

    Safety:
        continue (default) changes nothing that was sent: it adds one short user message, after
        which the message is no longer final and its thinking blocks are replayed untouched.
        drop removes the thinking blocks at fault, every one when thinking is disabled (the
        API ignores earlier turns' thinking then anyway), the trailing ones otherwise, so the
        message stays a prefill; their thinking text is kept in the repair record, and a
        message left empty is removed. No thinking block is ever edited. A final message with
        tool calls still to be answered by the client is left alone.
    """

    code = "AN016"
    name = "final-thinking"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.thinking-final",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        enabled = thinking_on(transcript.body.get("thinking"))
        entries = transcript.entries
        if not entries or _at_fault(entries[-1], enabled) is None:
            return
        if ctx.policy.trailing_thinking == "continue":
            why = "ends in thinking" if enabled else "holds thinking blocks while thinking is disabled"
            ctx.report(
                self,
                "added",
                entries[-1],
                None,
                f"added a user message {CONTINUE_TEXT!r} after the final assistant message, which {why}; "
                "its thinking blocks are kept as they are (policy trailing_thinking is continue)",
            )
            transcript.entries = [*entries, ctx.dialect.text_entry("user", CONTINUE_TEXT)]
            return
        # Dropping may empty the final message and make the one before it final: settle it too.
        while transcript.entries:
            last = transcript.entries[-1]
            doomed = _at_fault(last, enabled)
            if doomed is None:
                return
            for part in doomed:
                ctx.report(
                    self,
                    "dropped",
                    last,
                    None,
                    "removed a thinking block from the final assistant message (policy trailing_thinking is "
                    f"drop); it said: {_thought(part)}",
                )
            transcript.remove_parts([(last, doomed)])


def _at_fault(entry: Entry, enabled: bool) -> list[Part] | None:
    """The thinking blocks that make ``entry``, as the final message, a 400; None if none do."""
    if entry.role != "assistant" or not entry.has(THINKING):
        return None
    if any(p.kind in (CALL, SERVER_CALL) for p in entry.parts):
        # Calls the client still has to answer: only their results may follow.
        return None
    if not enabled:
        return [p for p in entry.parts if p.kind == THINKING]
    trailing: list[Part] = []
    for part in reversed(entry.parts):
        if part.kind != THINKING:
            break
        trailing.append(part)
    return trailing[::-1] or None


def _thought(part: Part) -> str:
    raw = part.raw if isinstance(part.raw, dict) else {}
    text = raw.get("thinking")
    if isinstance(text, str):
        return repr(text)
    return "nothing readable (redacted thinking)"
