from __future__ import annotations

import re
from typing import ClassVar

from .._ir import CALL, RESULT, Transcript
from ..rules._base import Context
from ..rules._ids import FreshIds, all_ids, digest
from ._strategy import Lesson, Strategy
from ._target import Named

# A refusal about an id: OpenAI's `...tool_calls[0].id'`, `tool_call_id'`, `call_id'`; Anthropic's
# `tool_use.id`, `tool_result.tool_use_id`.
_ABOUT_AN_ID = re.compile(r"(?:\b|_)id\b", re.IGNORECASE)
# The prefix each format's own ids carry: the new ids look like the provider's.
_PREFIX = {"anthropic-messages": "toolu_", "openai-chat": "call_", "openai-responses": "call_"}


class RekeyEmptyToolIds(Strategy):
    """
    What it repairs:
        Tool calls whose id is empty (or only spaces), with the results that answer them: a
        model or server that streamed calls without ids (Gemini 2.5 Pro through OpenAI-compatible
        layers, camel-ai/camel#3027 and vercel/ai#19091; LM Studio,
        lmstudio-ai/lmstudio-bug-tracker#830), replayed as they came. The refusal names one of
        them; every call with an empty id gets a fresh one, and each of its results the same.

    Why:
        OpenAI's schema takes no empty string where it wants one, in one wording for every
        field: "Invalid 'messages[69].tool_calls[0].function.name': empty string. Expected a
        string with minimum length 1, but got an empty string instead." (continuedev/continue#11645,
        a call's name); for a Responses item, "Invalid 'input[3].call_id': empty string. ..."
        (responses.R7, which orphan-tool-result cannot clear: an empty output answers an empty
        call). Anthropic's wording for an empty string: "messages.11.content.1.tool_use.name:
        String should have at least 1 character" (sipeed/picoclaw#1658, a call's name). The same
        wordings at a call's id or a result's ``tool_call_id`` or ``tool_use_id`` are read the
        same way [infer: no report found quotes them there]. Every later turn replays the call.

    Example:
        Before: assistant calls read_file ("") and list_dir ("") / tool ("") "a" / tool ("") "b";
                refused: "Invalid 'messages[1].tool_calls[0].id': empty string. ..."
        After:  assistant calls read_file (call_3f2a...) and list_dir (call_91c0...) /
                tool (call_3f2a...) "a" / tool (call_91c0...) "b"

    Safety:
        Results are matched to the calls of their turn in order, as a provider that pairs
        results by position would: the n-th result with an empty id after a turn answers that
        turn's n-th call with an empty id. A result with an empty id that no such call is left
        for keeps its id. The new ids are deterministic (a hash of the call's place and name, so
        a prompt cache stays valid from turn to turn), collide with no other id, and are mapped
        back to the client's own (empty) ones in the answer (``restore_ids``). Nothing else of a
        call or result changes. OpenAI Chat, Anthropic and Responses (Bedrock's and Gemini's
        empty ids are invalid-tool-id's and Gemini's own pairing's).

        Learnt for an upstream (applied before any refusal of later requests to it), it gives
        every empty id a new one the same way, refusal or not.
    """

    code = "RJ015"
    name = "rekey-empty-tool-ids"
    apis = frozenset(_PREFIX)
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api not in self.apis or not _ABOUT_AN_ID.search(target.message):
            return
        named = target.part
        if named is None and target.entry is not None and target.entry.role == "tool" and target.entry.parts:
            named = target.entry.parts[0]  # an OpenAI tool message is its result
        if named is not None and named.kind in (CALL, RESULT) and _blank(named.call_id):
            self._rekey(transcript, ctx)

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        if ctx.api in self.apis:
            self._rekey(transcript, ctx)

    def _rekey(self, transcript: Transcript, ctx: Context) -> None:
        taken = all_ids(transcript)
        fresh = FreshIds(taken)
        waiting: list[str] = []
        for entry in transcript.entries:
            if any(p.kind == CALL for p in entry.parts):
                # A new turn's calls: what the last one left unanswered stays so.
                waiting = []
            for at, part in enumerate(entry.parts):
                if not _blank(part.call_id) or part.kind not in (CALL, RESULT):
                    continue
                if part.kind == CALL:
                    base = _PREFIX[ctx.api] + digest(f"{entry.origin}:{at}:{part.name or ''}")
                    new = fresh(base) if base in taken else base
                    taken.add(new)
                    waiting.append(new)
                    ctx.restore_ids[new] = part.call_id or ""
                    detail = f"gave a call to {part.name!r} with an empty id the id {new!r}, and its results"
                    ctx.report(self, "renamed", entry, part.call_id, detail)
                elif waiting:
                    new = waiting.pop(0)
                else:
                    continue
                entry.parts[at] = ctx.dialect.with_call_id(part, new)
                entry.dirty = True


def _blank(call_id: str | None) -> bool:
    return call_id is not None and not call_id.strip()
