from __future__ import annotations

from typing import Any, ClassVar

from .._errors import SanitizeError
from .._ir import TEXT, Entry, Transcript
from ..dialects._shape import type_name
from ._base import Context, Rule, quoted_content


class SystemRoleMessage(Rule):
    """
    What it repairs:
        A message with role ``system`` inside ``messages``: an OpenAI-style history sent to the
        Messages API by a client or gateway that converts the tool calls but not the system
        prompt, or a harness that injects a reminder as a system message mid-conversation.

    Why:
        Anthropic: "messages: Unexpected role "system". The Messages API accepts a top-level
        `system` parameter, not "system" as an input message role."

    Example:
        Before: system "Be brief." / user "hi"  (no top-level system)
        After:  top-level system "Be brief." / user "hi"
        Before: top-level system "You are an agent." / user "hi" / system "Answer in French." /
                assistant "Bonjour"
        After:  top-level system "You are an agent.\\n\\nAnswer in French." / user "hi" /
                assistant "Bonjour"

    Safety:
        Every text of every system message is kept, in order, after the top-level system prompt
        the request already had: joined with a blank line when all of them are strings, as text
        blocks (each block kept as sent, cache_control included) otherwise. The model reads them
        as system instructions still, but at the start of the conversation rather than where the
        message stood. A blank system text is dropped. Blocks the top-level field cannot hold
        (an image) stay where they were, in a user message.
    """

    code = "AN014"
    name = "system-role-message"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A10-system",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not any(e.role == "system" for e in transcript.entries):
            return
        moved: list[Any] = []
        entries: list[Entry] = []
        for entry in transcript.entries:
            if entry.role != "system":
                entries.append(entry)
                continue
            texts = [p for p in entry.parts if p.kind == TEXT and _text(p.raw).strip()]
            others = [p for p in entry.parts if p.kind != TEXT]
            moved += [p.raw for p in texts]
            if texts:
                what = quoted_content(Entry(entry.role, texts, entry.source, entry.origin))
                ctx.report(
                    self, "moved", entry, None, f"moved a system message into the top-level system field: {what}"
                )
            if others:
                entry.role = "user"
                entry.parts = others
                entry.source = {**entry.source, "role": "user"}
                entry.dirty = True
                entries.append(entry)
                ctx.report(self, "kept", entry, None, "kept the system message's non-text blocks as a user message")
            elif not texts:
                ctx.report(self, "removed", entry, None, "removed a blank system message")
        transcript.entries = entries
        if moved:
            transcript.body_updates["system"] = _merged(transcript.field("system"), moved)


def _text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    text = raw.get("text") if isinstance(raw, dict) else None
    return text if isinstance(text, str) else ""


def _merged(system: Any, moved: list[Any]) -> str | list[Any]:
    """The top-level system prompt with the moved texts after it, in their order."""
    if system is not None and not isinstance(system, str | list):
        raise SanitizeError("system", f"must be a string or an array of text blocks, not {type_name(system)}")
    if (system is None or isinstance(system, str)) and all(isinstance(raw, str) for raw in moved):
        return "\n\n".join([*([system] if system else []), *moved])
    head: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) and system else []
    if isinstance(system, list):
        head = list(system)
    return head + [{"type": "text", "text": raw} if isinstance(raw, str) else raw for raw in moved]
