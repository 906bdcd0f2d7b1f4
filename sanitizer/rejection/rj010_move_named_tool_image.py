from __future__ import annotations

from typing import Any, ClassVar

from .._ir import OTHER, RESULT, TEXT, Entry, Part, Transcript
from ..rules._base import Context
from ._strategy import Lesson, Strategy
from ._target import Named


class MoveNamedToolImage(Strategy):
    """
    What it repairs:
        An OpenAI Chat tool message the provider names that holds an image (a screenshot or a
        chart a tool returned, as an ``image_url`` part), where the provider takes images from
        users only: the images move to a user message after the turn's tool messages.

    Why:
        OpenAI: "Invalid 'messages[234]'. Image URLs are only allowed for messages with role
        'user', but this message with role 'tool' contains an image URL." (OpenHands/OpenHands#7700)
        Every later turn carries the tool message, and gets the same answer.

    Example:
        Before: assistant calls screenshot (call_1) / tool (call_1) [text "Captured.", image_url
                {...}] / user "What do you see?"; refused naming messages[2]
        After:  assistant calls screenshot (call_1) / tool (call_1) [text "Captured."] /
                user [text "The image(s) the tool call call_1 returned:", image_url {...}] /
                user "What do you see?"

    Safety:
        Nothing is removed: the images move, whole and in order, to a user message labelled
        with the call's id, placed after the run of tool messages so that every call is still
        answered first. The tool message keeps its text parts; left with none, it says where
        its images went. Only the named tool message is changed, and only for a refusal about
        images.

        Learnt for an upstream (applied before any refusal of later requests to it), it moves
        the images of every tool message, each turn's in the order of its results.
    """

    code = "RJ010"
    name = "move-named-tool-image"
    apis = frozenset({"openai-chat"})
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        entry = target.entry
        if ctx.api != "openai-chat" or entry is None or entry.role != "tool" or "image" not in target.message.lower():
            return
        self._move(transcript, entry, ctx, set())

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        if ctx.api != "openai-chat":
            return
        placed: set[int] = set()
        for entry in list(transcript.entries):
            if entry.role == "tool" and entry.parts:
                self._move(transcript, entry, ctx, placed)

    def _move(self, transcript: Transcript, entry: Entry, ctx: Context, placed: set[int]) -> None:
        """Move the tool message's images to a user message after its turn's results (and after
        the user messages ``placed`` there for earlier results of the turn, kept in order)."""
        result = entry.parts[0]
        content = result.raw.get("content") if isinstance(result.raw, dict) else None
        if not isinstance(content, list):
            return
        images = [block for block in content if _is_image(block)]
        if not images:
            return
        kept = [block for block in content if not _is_image(block)]
        call = result.call_id or "?"
        if not kept:
            note = f"[The tool returned {_count(images)}: it is in the user message after this turn's tool results.]"
            kept = [{"type": "text", "text": note}]
        entry.parts[0] = Part(RESULT, {**result.raw, "content": kept}, result.call_id, result.name)
        entry.dirty = True
        label = f"The image(s) the tool call {call} returned:"
        moved = [Part(TEXT, label), *(Part(OTHER, block) for block in images)]
        user = Entry("user", moved, {"role": "user"}, None, dirty=True)
        entries = transcript.entries
        at = next(i for i, e in enumerate(entries) if e is entry) + 1
        # After the turn's last tool message: a user message between two of them would leave the
        # later calls unanswered where the provider looks for their results.
        while at < len(entries) and (entries[at].role == "tool" or id(entries[at]) in placed):
            at += 1
        entries.insert(at, user)
        placed.add(id(user))
        detail = f"moved {_count(images)} from the tool message to a user message after the turn's results"
        ctx.report(self, "moved", entry, result.call_id, detail)


def _is_image(block: Any) -> bool:
    kind = block.get("type") if isinstance(block, dict) else None
    return isinstance(kind, str) and "image" in kind


def _count(images: list[Any]) -> str:
    return "an image" if len(images) == 1 else f"{len(images)} images"
