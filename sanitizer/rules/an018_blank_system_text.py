from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule


class BlankSystemText(Rule):
    """
    What it repairs:
        A top-level ``system`` prompt holding text that is empty or only whitespace: a client
        that assembles its system prompt from parts (CLAUDE.md, skills, AGENTS.md) and keeps a
        part that holds only a newline, or one that sends ``system: ""`` when no system prompt
        is configured.

    Why:
        Anthropic: "system: text content blocks must contain non-whitespace text"
        (anomalyco/opencode#35101, agentjido/req_llm#711) and "system: text content blocks must
        be non-empty" (olimorris/codecompanion.nvim PR#2700, t8y2/dbx PR#1298, for
        ``system: ""`` too).

    Example:
        Before: system [text "You are an agent.", text "\\n \\t\\n"] / user "hi"
        After:  system [text "You are an agent."] / user "hi"
        Before: system "" / user "hi"
        After:  (no system) / user "hi"

    Safety:
        Drops only system text that says nothing; every other system block keeps its place and
        its ``cache_control``. A blank block's own ``cache_control`` goes with it. A ``system``
        left with nothing (a blank string, or only blank blocks) is removed from the request:
        it had no instruction to give.
    """

    code = "AN018"
    name = "blank-system-text"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A6-system", "anthropic.A7-system")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # system-role-message may already have moved system messages into the field.
        system = transcript.field("system")
        if isinstance(system, str):
            if not system.strip():
                self._remove(transcript, ctx, f"removed the system prompt {system!r}, which held no text")
            return
        if not isinstance(system, list):
            return
        kept = [block for block in system if not _blank_text(block)]
        dropped = len(system) - len(kept)
        if not dropped:
            return
        if not kept:
            self._remove(transcript, ctx, f"removed the system prompt, whose {dropped} text block(s) were all blank")
            return
        ctx.report(self, "dropped", None, None, f"dropped {dropped} blank system text block(s)")
        transcript.body_updates["system"] = kept

    def _remove(self, transcript: Transcript, ctx: Context, detail: str) -> None:
        ctx.report(self, "removed", None, None, detail)
        transcript.body_updates.pop("system", None)
        transcript.body_removals.add("system")


def _blank_text(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") != "text":
        return False
    text = block.get("text")
    return isinstance(text, str) and not text.strip()
