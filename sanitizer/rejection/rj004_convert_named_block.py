from __future__ import annotations

from typing import Any

from .._ir import OTHER, Transcript
from ..rules._base import Context
from ._strategy import Strategy
from ._target import Named


class ConvertNamedBlock(Strategy):
    """
    What it repairs:
        A block the provider names that the message it sits in may not carry: an image, a
        document or another media block in an assistant (model) message.

    Why:
        Providers accept media from the user only, and say where they found it, e.g.
        "messages.1.content.1: `image` blocks are not supported in assistant messages".

    Example:
        Before: assistant [text "Here it is:", image {...}]; refused naming messages.1.content.1
        After: assistant [text "Here it is:", text "[an image block was here: the provider does
               not accept it in this message]"]

    Safety:
        The block is replaced by a note saying what was there, so the model still knows. Never
        applied to a user's message, nor to a text, a call or a result.
    """

    code = "RJ004"
    name = "convert-named-block"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        entry, part = target.entry, target.part
        if entry is None or part is None or part.kind != OTHER or entry.role in ("user", "other"):
            return
        kind = _type(part.raw)
        note = f"[{_article(kind)} {kind} block was here: the provider does not accept it in this message]"
        (replacement,) = ctx.dialect.text_entry(entry.role, note).parts
        entry.parts = [replacement if p is part else p for p in entry.parts]
        entry.dirty = True
        ctx.report(self, "converted", entry, None, f"replaced the {kind} block the provider refused with a note")


def _type(raw: Any) -> str:
    kind = raw.get("type") if isinstance(raw, dict) else None
    if isinstance(kind, str):
        return kind
    # Gemini's and Bedrock's blocks are keyed by their kind: {"inlineData": ...}, {"image": ...}.
    keys = list(raw) if isinstance(raw, dict) else []
    return keys[0] if len(keys) == 1 else "media"


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"
