from __future__ import annotations

from .._ir import CALL, RESULT, Entry, Part, Transcript
from .._placement import attach_results
from ._base import Context, Rule


class MisplacedToolResult(Rule):
    """
    What it repairs:
        A real tool result that exists in the transcript but not right after its call: after
        the next user turn or a later assistant turn, or even before the call (a framework that
        persisted the result first, or a merge of two histories).

    Why:
        The result does not count where it is, and the call looks unanswered.
        OpenAI: "Invalid parameter: messages with role 'tool' must be a response to a
        preceeding message with 'tool_calls'."
        Anthropic: "messages.3.content.0: unexpected `tool_use_id` found in `tool_result`
        blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block
        in the previous message."

    Example:
        Before: user "weather?" / assistant calls get_weather (call_1) / user "and tomorrow?" /
                tool result for call_1 "Sunny"
        After:  user "weather?" / assistant calls get_weather / tool result "Sunny" /
                user "and tomorrow?"

    Safety:
        The real result is moved, never replaced by a synthetic one; nothing is dropped.
        Results join their call's other results in the order of the calls.
    """

    code = "TP003"
    name = "misplaced-tool-result"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        result_role, spans = ctx.dialect.result_role, ctx.dialect.results_span_messages
        # One pass: who makes each call (the first caller, as Transcript.call_owners), the ids in
        # each caller's result zone (see _placement.zone), and every result with an id, judged
        # against its caller's zone once all are known.
        owners: dict[str, Entry] = {}
        zones: dict[int, set[str | None]] = {}
        zone: set[str | None] | None = None
        results: list[tuple[Entry, Part, str]] = []
        for entry in entries:
            in_zone = zone is not None and entry.role == result_role
            leading = True
            calling = False
            for part in entry.parts:
                if part.kind == RESULT:
                    if in_zone and leading:
                        assert zone is not None
                        zone.add(part.call_id)
                    if part.call_id:
                        results.append((entry, part, part.call_id))
                    continue
                leading = False
                if part.kind == CALL:
                    calling = True
                    if part.call_id is not None:
                        owners.setdefault(part.call_id, entry)
            if calling:
                zone = zones[id(entry)] = set()
            elif not (in_zone and leading and spans):
                zone = None
        moving = []
        for holder, part, call_id in results:
            owner = owners.get(call_id)
            if owner is not None and call_id not in zones[id(owner)]:
                moving.append((owner, holder, part))
        if not moving:
            return
        leaving: dict[int, tuple[Entry, set[int]]] = {}
        for owner, holder, part in moving:
            ctx.report(
                self,
                "moved",
                holder,
                part.call_id,
                f"moved the result for call {ctx.dialect.public_id(part.call_id)!r} from message {holder.origin} "
                f"to right after its call in message {owner.origin}",
            )
            leaving.setdefault(id(holder), (holder, set()))[1].add(id(part))
        for holder, gone in leaving.values():
            holder.parts = [p for p in holder.parts if id(p) not in gone]
            holder.dirty = True
        transcript.entries = [e for e in entries if e.parts or not e.dirty]
        by_owner: dict[int, tuple[Entry, list[Part]]] = {}
        for owner, _, part in moving:
            by_owner.setdefault(id(owner), (owner, []))[1].append(part)
        attach_results(transcript, ctx.dialect, list(by_owner.values()))
