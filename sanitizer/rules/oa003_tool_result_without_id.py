from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Entry, Transcript
from ._base import Context, Rule


class ToolResultWithoutId(Rule):
    """
    What it repairs:
        A tool message without ``tool_call_id`` (missing or null): a client or proxy that keeps
        only a message's role and content, or an app that appends the tool's output without
        the id of the call it answers.

    Why:
        OpenAI: "Missing parameter 'tool_call_id': messages with role 'tool' must have a
        'tool_call_id'."
        Groq: "'messages.3' : for 'role:tool' the following must be satisfied
        [('messages.3.tool_call_id' : property 'tool_call_id' is missing)]"

    Example:
        Before: user "list the files" / assistant calls shell (call_1) / tool result "a.txt b.txt"
                (no tool_call_id)
        After:  user "list the files" / assistant calls shell (call_1) / tool result for call_1
                "a.txt b.txt"

    Safety:
        The id is given only when there is no doubt: the message is the only one without an id
        among the tool messages right after an assistant turn, and exactly one call of that turn
        has no result anywhere. Any other tool message without an id answers no call it can be
        matched to, and orphan-tool-result (TP004) takes it as it takes any orphan: its content
        is kept as user text (policy orphan_tool_result ``fold``) or in the repair record
        (``drop``). Nothing is guessed from order when several calls are open.
    """

    code = "OA003"
    name = "tool-result-without-id"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O9", "groq.X5")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        if not any(e.role == "tool" and e.parts[0].call_id is None for e in entries):
            return
        answered = {p.call_id for _, p in transcript.parts() if p.kind == RESULT and p.call_id is not None}
        # Each run of tool messages, with the assistant message before it and its id-less members.
        runs: list[tuple[Entry | None, list[int]]] = []
        previous: Entry | None = None
        for index, entry in enumerate(entries):
            if entry.role == "tool":
                if previous is None or previous.role != "tool":
                    runs.append((previous, []))
                if entry.parts[0].call_id is None:
                    runs[-1][1].append(index)
            previous = entry
        for owner, unnamed in runs:
            if owner is None or len(unnamed) != 1:
                continue
            open_calls = [c for c in owner.calls() if c.call_id not in answered]
            if len(open_calls) != 1:
                continue
            (call,) = open_calls
            assert call.call_id is not None
            entry = entries[unnamed[0]]
            entry.parts[0] = ctx.dialect.with_call_id(entry.parts[0], call.call_id)
            entry.dirty = True
            answered.add(call.call_id)
            ctx.report(
                self,
                "matched",
                entry,
                call.call_id,
                f"gave a tool message without a tool_call_id the id "
                f"of the one unanswered call of message {owner.origin} ({call.name!r}), right before it",
            )
