from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, RESULT, Transcript
from ._base import Context, Rule
from ._ids import FreshIds, all_ids


class ReusedToolCallId(Rule):
    """
    What it repairs:
        A tool-call id used again by a later assistant message (providers or gateways that
        number calls ``call_0``, ``call_1``... per turn; id normalisation that is not
        injective).

    Why:
        Anthropic: "messages.3.content.0: `tool_use` ids must be unique"
        OpenAI: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_0', in
        messages[2] and messages[4]."

    Example:
        Before: assistant calls ls (call_0) / result call_0 / assistant calls pwd (call_0) /
                result call_0
        After:  assistant calls ls (call_0) / result call_0 / assistant calls pwd (call_0_2) /
                result call_0_2

    Safety:
        Renames the later call and the results that follow it, consistently; a result answers
        the nearest call before it with that id, so every pairing the client meant is kept.
        The new id is deterministic (``<id>_2``, ``<id>_3``...), so prompt caches stay valid.
    """

    code = "TP006"
    name = "reused-tool-call-id"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A11",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        fresh: FreshIds | None = None
        current: dict[str, str] = {}
        seen: set[str] = set()
        for entry in transcript.entries:
            if not entry.parts:
                continue
            for index, part in enumerate(entry.parts):
                original = part.call_id
                if original is None:
                    continue
                if part.kind == CALL:
                    if original in seen:
                        fresh = FreshIds(all_ids(transcript)) if fresh is None else fresh
                        renamed = fresh(original)
                        entry.parts[index] = ctx.dialect.with_call_id(part, renamed)
                        entry.dirty = True
                        current[original] = renamed
                        ctx.restore_ids[renamed] = original
                        ctx.report(
                            self,
                            "renamed",
                            entry,
                            original,
                            f"call id {original!r} was already used by an earlier message; renamed it and "
                            f"the results that follow it to {renamed!r}",
                        )
                    seen.add(original)
                elif part.kind == RESULT and original in current:
                    entry.parts[index] = ctx.dialect.with_call_id(part, current[original])
                    entry.dirty = True
