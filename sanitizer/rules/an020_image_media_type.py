from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Entry, Part, Transcript
from .._media import mislabelled
from ._base import Context, Rule


class ImageMediaType(Rule):
    """
    What it repairs:
        A base64 image whose bytes are another type than its ``media_type`` says: a screenshot
        labelled by its file name, a PNG a client converted to JPEG (or back) without relabelling
        it, an image a tool returned with a type guessed once for all of them. In a message or
        inside a tool result.

    Why:
        Anthropic decodes the image and refuses the mismatch, on this turn and every later one:
        "messages.83.content.0.tool_result.content.1.image.source.base64: The image was
        specified using the image/jpeg media type, but the image appears to be a image/png
        image" (vybestack/llxprt-code#2130); earlier worded "...image.source.base64.data:
        Image does not match the provided media type image/png" (anthropics/claude-code#6300,
        #15746: "I cannot continue the task that was going on").

    Example:
        Before: user [text "what is on screen?", image (media_type image/jpeg, PNG bytes)]
        After:  user [text "what is on screen?", image (media_type image/png, the same bytes)]

    Safety:
        Only the label changes, to what the image's own first bytes say (the signatures of PNG,
        JPEG, GIF and WebP, the four types Anthropic takes); the image data is untouched. An
        image whose bytes match none of them, or data that is not base64, is left as it is.
    """

    code = "AN020"
    name = "image-media-type"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A21",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                raw = part.raw
                if type(raw) is not dict:
                    continue
                nested = raw.get("content") if raw.get("type") == "tool_result" else None
                if type(nested) is list:
                    fixed = [_relabelled(block, entry, ctx, self) for block in nested]
                    if any(new is not old for new, old in zip(fixed, nested, strict=True)):
                        entry.parts[n] = Part(part.kind, {**raw, "content": fixed}, part.call_id, part.name)
                        entry.dirty = True
                else:
                    new = _relabelled(raw, entry, ctx, self)
                    if new is not raw:
                        entry.parts[n] = Part(part.kind, new, part.call_id, part.name)
                        entry.dirty = True


def _relabelled(block: Any, entry: Entry, ctx: Context, rule: Rule) -> Any:
    """``block`` with the media type its bytes have, reported; ``block`` itself if it needs none."""
    wrong = mislabelled(block)
    if wrong is None:
        return block
    declared, actual = wrong
    ctx.report(
        rule, "relabelled", entry, None, f"relabelled an image declared {declared} as {actual}, what its bytes are"
    )
    return {**block, "source": {**block["source"], "media_type": actual}}
