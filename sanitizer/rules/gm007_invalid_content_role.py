from __future__ import annotations

from typing import Any, ClassVar

from .._ir import TEXT, Entry, Transcript
from ._base import Context, Rule, quoted_content


class InvalidContentRole(Rule):
    """
    What it repairs:
        A Gemini content whose role is an OpenAI-style ``assistant``, ``system`` or
        ``developer``: a client or gateway that copies its messages' roles into ``contents``
        unchanged (mem0's Gemini LLM for the assistant's turns, a Responses-to-Gemini
        translator for a developer message).

    Why:
        Gemini: "Please use a valid role: user, model." (router-for-me/CLIProxyAPI#2791,
        mem0ai/mem0#6393)

    Example:
        Before: user "hi" / assistant "hello" / user "Create procedural memory."
        After:  user "hi" / model "hello" / user "Create procedural memory."
        Before: developer "Answer in French." / user "hi"  (no systemInstruction)
        After:  systemInstruction "Answer in French." / user "hi"

    Safety:
        An ``assistant`` content is the model's: only its role changes. The text parts of a
        ``system`` or ``developer`` content go, as sent and in order, into
        ``systemInstruction`` after the parts it already had: the model reads them as
        instructions still, but ahead of the conversation rather than where the content stood.
        Parts ``systemInstruction`` cannot hold (an image, anything but text), and all of a
        content's parts when the request's ``systemInstruction`` is not an object holding a
        list of parts, stay where they were, in a user content. An empty text is dropped (it
        holds nothing, and Gemini refuses an empty part). Any other role is left to the server.
    """

    code = "GM007"
    name = "invalid-content-role"
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.invalid-role",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        field = "system_instruction" if "system_instruction" in transcript.body else "systemInstruction"
        instruction = transcript.body.get(field)
        # What systemInstruction held before (a Content), or None when it cannot take more parts.
        held = _instruction_parts(instruction)
        moved: list[Any] = []
        entries: list[Entry] = []
        for entry in transcript.entries:
            role = entry.source.get("role")
            if entry.role == "assistant" and role != "model":
                entry.source = {**entry.source, "role": "model"}
                entry.dirty = True
                ctx.report(self, "renamed", entry, None, f"gave a content with role {role!r} the role 'model'")
            elif entry.role == "system":
                kept = self._move_instructions(entry, role, held is not None, moved, ctx)
                if kept is not None:
                    entries.append(kept)
                continue
            entries.append(entry)
        transcript.entries = entries
        if moved:
            base = instruction if isinstance(instruction, dict) else {}
            transcript.body_updates[field] = {**base, "parts": [*(held or ()), *moved]}

    def _move_instructions(
        self, entry: Entry, role: Any, movable: bool, moved: list[Any], ctx: Context
    ) -> Entry | None:
        """Move a system content's texts into ``moved``; what stays, if anything, as a user content."""
        texts = [p for p in entry.parts if p.kind == TEXT and p.raw.get("text") != ""]
        if len(texts) < sum(p.kind == TEXT for p in entry.parts):
            ctx.report(self, "removed", entry, None, f"dropped the empty texts of a content with role {role!r}")
        if movable and texts:
            moved += [p.raw for p in texts]
            what = quoted_content(Entry(entry.role, texts, entry.source, entry.origin))
            ctx.report(self, "moved", entry, None, f"moved a content with role {role!r} into systemInstruction: {what}")
        staying = [p for p in entry.parts if p.kind != TEXT or (not movable and p.raw.get("text") != "")]
        if not staying:
            if not entry.parts:
                ctx.report(self, "removed", entry, None, f"removed an empty content with role {role!r}")
            return None
        entry.role = "user"
        entry.parts = staying
        entry.source = {**entry.source, "role": "user"}
        entry.dirty = True
        detail = f"kept what systemInstruction cannot hold of a content with role {role!r} as a user content"
        ctx.report(self, "kept", entry, None, detail)
        return entry


def _instruction_parts(instruction: Any) -> list[Any] | None:
    """The parts of the request's systemInstruction (none when it has none), or None when its
    shape leaves no place to add more."""
    if instruction is None:
        return []
    if not isinstance(instruction, dict):
        return None
    parts = instruction.get("parts", [])
    return parts if isinstance(parts, list) else None
