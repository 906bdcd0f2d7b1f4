from __future__ import annotations

from typing import ClassVar

from .._ir import CALL, RESULT, Entry, Part, Transcript
from ._base import Context, Rule
from .tp004_orphan_tool_result import folded_text


class DuplicateToolResult(Rule):
    """
    What it repairs:
        Several results for one tool call: a session restored twice, a framework that wrote
        an "interrupted" result and then the real one, two histories merged.

    Why:
        OpenAI: "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1', in
        messages[2] and messages[3]."
        Anthropic: "each tool_use must have a single result. Found multiple tool_result blocks
        with id: toolu_1"

    Example:
        Before: assistant calls ls (call_1) / tool result "file_a file_b" /
                tool result "file_a file_b"
        After:  assistant calls ls (call_1) / tool result "file_a file_b"
        Before: assistant calls ls (call_1) / tool result "Tool was interrupted." /
                tool result "file_a file_b"
        After (policy orphan_tool_result fold): assistant calls ls (call_1) / tool result
                "file_a file_b" / user "Result of tool call call_1 returned earlier: Tool was
                interrupted."

    Safety:
        Keeps the last result (the most recent word on the call). An earlier one that says the
        same is dropped. One that says something else is, under the orphan_tool_result policy
        fold (the default), turned into labelled user text placed after the turn's results
        (in their message where results share one), so nothing a tool returned is lost; under
        drop, it is dropped with its content kept in the repair record. Results of an id no
        call has are orphans, whatever their number, and orphan-tool-result's (which folds
        them into text by default): this rule leaves them alone, also when a refusal names it.
    """

    code = "TP005"
    name = "duplicate-tool-result"
    fixes: ClassVar[tuple[str, ...]] = ("openai.O4", "anthropic.duplicate-result")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # Plain loops, one pass, and a list only for an id answered twice: this runs on every turn
        # of a broken session, whose results are almost all single.
        calls: set[str | None] = set()
        first: dict[str | None, tuple[Entry, Part]] = {}
        repeated: dict[str | None, list[tuple[Entry, Part]]] = {}
        for entry in transcript.entries:
            for part in entry.parts:
                if part.kind == CALL:
                    calls.add(part.call_id)
                elif part.kind == RESULT:
                    earlier = first.get(part.call_id)
                    if earlier is None:
                        first[part.call_id] = (entry, part)
                    else:
                        repeated.setdefault(part.call_id, [earlier]).append((entry, part))
        # In the order the ids were first answered.
        seen = {call_id: repeated[call_id] for call_id in first if call_id in repeated and call_id in calls}
        fold = ctx.policy.orphan_tool_result == "fold"
        removals = []
        # The text of each earlier result that said something else, by the entry of the kept one.
        folded: dict[int, tuple[Entry, list[str]]] = {}
        for call_id, results in seen.items():
            kept_entry, kept = results[-1]
            said = ctx.dialect.payload(kept)
            for entry, part in results[:-1]:
                removals.append((entry, [part]))
                content = ctx.describe(part)
                if not fold or ctx.dialect.payload(part) == said:
                    ctx.report(
                        self,
                        "dropped",
                        entry,
                        call_id,
                        f"dropped an earlier duplicate result (the last one is kept); its content was: {content}",
                    )
                    continue
                ctx.report(
                    self,
                    "folded",
                    entry,
                    call_id,
                    f"turned an earlier duplicate result (the last one is kept) into user text; its content was: "
                    f"{content}",
                )
                _, text = folded_text(part, ctx)
                folded.setdefault(id(kept_entry), (kept_entry, []))[1].append(text)
        transcript.remove_parts(removals)
        for kept_entry, texts in folded.values():
            self._place(transcript, kept_entry, texts, ctx)

    @staticmethod
    def _place(transcript: Transcript, kept: Entry, texts: list[str], ctx: Context) -> None:
        # Text never goes before a result of the turn: after the kept result's message where
        # results share one, else after the run of result messages it stands in.
        parts = [ctx.dialect.text_entry("user", t) for t in texts]
        if ctx.dialect.results_share_message:
            kept.parts = kept.parts + [e.parts[0] for e in parts]
            kept.dirty = True
            return
        entries = transcript.entries
        at = next(n for n, e in enumerate(entries) if e is kept) + 1
        while at < len(entries) and entries[at].parts and all(p.kind == RESULT for p in entries[at].parts):
            at += 1
        entries[at:at] = parts
