from __future__ import annotations

from .._ir import RESULT, Transcript
from ..rules._base import Context
from ._strategy import Strategy
from ._target import Named


class MergeNamedMessage(Strategy):
    """
    What it repairs:
        A message the provider names that has the same role as the message before it (or,
        when it is first, after it), where the provider wants the roles to alternate.

    Why:
        Chat templates and APIs that require alternation refuse the turn and name the message,
        e.g. "messages[3]: consecutive messages with the same role are not allowed".

    Example:
        Before: user "Hi" / user "Are you there?"; refused naming messages[1]
        After: user "Hi\\n\\nAre you there?"

    Safety:
        Nothing is removed: the two messages' blocks are joined in order (a turn's tool
        results first where the format wants them first). Not applied to OpenAI tool messages
        or Responses items, which stand alone.
    """

    code = "RJ005"
    name = "merge-named-message"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        entry = target.entry
        if entry is None or target.part is not None or entry.role in ("tool", "other") or ctx.api == "openai-responses":
            return
        entries = transcript.entries
        at = next(i for i, e in enumerate(entries) if e is entry)
        if at > 0 and entries[at - 1].role == entry.role:
            first, second = entries[at - 1], entry
        elif at + 1 < len(entries) and entries[at + 1].role == entry.role:
            first, second = entry, entries[at + 1]
        else:
            return
        parts = first.parts + second.parts
        if ctx.dialect.results_share_message:
            parts = [p for p in parts if p.kind == RESULT] + [p for p in parts if p.kind != RESULT]
        first.parts = parts
        first.dirty = True
        transcript.entries = [e for e in entries if e is not second]
        ctx.report(self, "merged", second, None, f"merged into the {first.role} message before it")
