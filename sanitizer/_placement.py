"""Where the results of an assistant message's tool calls belong, and how to put them there.

The *result zone* of an assistant message is the run of result parts right after it: for
OpenAI Chat and Responses the ``tool`` messages (output items) that follow it; for Anthropic
the leading ``tool_result`` blocks of the user message(s) that follow it (the API merges
consecutive user messages); for Gemini and Bedrock the leading results of the one next user
message (they do not merge turns).
"""

from __future__ import annotations

from ._ir import RESULT, Entry, Part, Transcript
from .dialects import Dialect

Slot = tuple[int, int]


def zone(entries: list[Entry], owner_index: int, dialect: Dialect) -> tuple[list[Slot], Slot | None]:
    """The (entry, part) slots of the zone after ``entries[owner_index]``, and where it ends.

    The end is ``(entry, part)`` when the zone stops inside a message that can take more
    results at that position, or ``None`` when the next message cannot hold results.
    """
    slots: list[Slot] = []
    j = owner_index + 1
    while j < len(entries) and entries[j].role == dialect.result_role:
        parts = entries[j].parts
        k = 0
        while k < len(parts) and parts[k].kind == RESULT:
            slots.append((j, k))
            k += 1
        if k < len(parts) or not dialect.results_span_messages:
            return slots, (j, k)
        j += 1
    return slots, None


def attach_results(transcript: Transcript, dialect: Dialect, attachments: list[tuple[Entry, list[Part]]]) -> None:
    """Put each owner's result parts into its zone, keeping results in the order of the calls.

    An owner is a message of the model, so the stretch of ``result_role`` messages after it
    (everything its zone can reach or grow into) holds no other owner: each stretch is repaired
    on its own, whatever the order of ``attachments``, and the transcript is rebuilt once, so
    answering calls in many messages stays linear.
    """
    pending = {id(owner): parts for owner, parts in attachments}
    entries = transcript.entries
    owners = [i for i, entry in enumerate(entries) if id(entry) in pending]
    if not owners:
        return
    rebuilt: list[Entry] = []
    copied = 0
    for n, start in enumerate(owners):
        limit = owners[n + 1] if n + 1 < len(owners) else len(entries)
        stop = start + 1
        while stop < limit and entries[stop].role == dialect.result_role:
            stop += 1
        stretch = entries[start:stop]
        _attach(stretch, dialect, pending[id(entries[start])])
        rebuilt += entries[copied:start]
        rebuilt += stretch
        copied = stop
    rebuilt += entries[copied:]
    transcript.entries = rebuilt


def _attach(entries: list[Entry], dialect: Dialect, parts: list[Part]) -> None:
    """Put ``parts`` into the zone of ``entries[0]``; ``entries`` is it and its stretch of result messages."""
    slots, end = zone(entries, 0, dialect)
    last_zone_entry = slots[-1][0] if slots else None
    shares = dialect.results_share_message
    if shares and last_zone_entry is not None and (end is None or end[0] != last_zone_entry):
        # The zone ends with a message holding only results: the new ones join it.
        target = entries[last_zone_entry]
        target.parts.extend(parts)
        target.dirty = True
    elif shares and end is not None:
        target = entries[end[0]]
        target.parts[end[1] : end[1]] = parts
        target.dirty = True
    else:
        at = (slots[-1][0] + 1) if slots else 1
        entries[at:at] = dialect.new_result_entries(parts)
    _order_zone(entries, dialect)


def _order_zone(entries: list[Entry], dialect: Dialect) -> None:
    order = {p.call_id: n for n, p in enumerate(entries[0].calls())}
    slots, _ = zone(entries, 0, dialect)

    def rank(part: Part) -> int:
        return order.get(part.call_id, len(order))

    ranks = [rank(entries[j].parts[k]) for j, k in slots]
    if ranks == sorted(ranks):
        return
    if not dialect.results_share_message:
        first, last = slots[0][0], slots[-1][0] + 1
        entries[first:last] = sorted(entries[first:last], key=lambda e: rank(e.parts[0]))
        return
    holders = {j for j, _ in slots}
    if len(holders) == 1:
        (j,) = holders
        lead = len(slots)
        entries[j].parts[:lead] = sorted(entries[j].parts[:lead], key=rank)
        entries[j].dirty = True
