"""The transcript as the rules see it: messages ("entries") holding typed parts.

Each dialect parses its wire format into this shape and renders it back. A part keeps the
original JSON object it came from (``raw``), so everything a rule does not touch is forwarded
exactly as the client sent it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

TEXT = "text"
THINKING = "thinking"
CALL = "call"
RESULT = "result"
SERVER_CALL = "server_call"
SERVER_RESULT = "server_result"
OTHER = "other"


@dataclass(slots=True)
class Part:
    kind: str
    raw: Any
    call_id: str | None = None
    name: str | None = None


@dataclass(slots=True)
class Entry:
    """One message. ``origin`` is its index in the input body (``None`` for one Suture made)."""

    role: str
    parts: list[Part]
    source: dict[str, Any]
    origin: int | None
    dirty: bool = False

    def calls(self) -> list[Part]:
        return [p for p in self.parts if p.kind == CALL]

    def has(self, kind: str) -> bool:
        return any(p.kind == kind for p in self.parts)


@dataclass(slots=True)
class Transcript:
    entries: list[Entry]
    body: dict[str, Any]
    body_updates: dict[str, Any] = field(default_factory=dict)
    body_removals: set[str] = field(default_factory=set)
    """Top-level fields the repaired body leaves out (an optional field no value is valid for)."""
    key: str = "messages"
    """The body field that holds the transcript (``messages``, ``input``, ``contents``)."""
    leading_kinds: frozenset[str] = frozenset()
    """Part kinds that belong to the part after them, in a format whose entries are runs of
    separate items (an OpenAI Responses reasoning item belongs to the call it led to)."""

    def field(self, name: str) -> Any:
        """A top-level field as the rules so far left it: None once one removed it."""
        if name in self.body_removals:
            return None
        return self.body_updates.get(name, self.body.get(name))

    def fields(self) -> dict[str, Any]:
        """The top-level fields as the rules so far left them (the transcript field as the input's)."""
        body = {**self.body, **self.body_updates}
        for name in self.body_removals:
            body.pop(name, None)
        return body

    def parts(self) -> Iterator[tuple[Entry, Part]]:
        for entry in self.entries:
            for part in entry.parts:
                yield entry, part

    def call_owners(self) -> dict[str, Entry]:
        """Map each tool-call id to the assistant entry that makes the call (the first, if reused)."""
        owners: dict[str, Entry] = {}
        for entry in self.entries:
            for part in entry.parts:
                if part.kind == CALL and part.call_id is not None:
                    owners.setdefault(part.call_id, entry)
        return owners

    def remove_parts(self, removals: Iterable[tuple[Entry, list[Part]]]) -> None:
        """Take each entry's doomed parts out of it; entries left with no parts leave the transcript.

        All removals are applied in one pass over the transcript, so a rule that takes parts out
        of many messages stays linear.
        """
        doomed: dict[int, tuple[Entry, set[int]]] = {}
        for entry, parts in removals:
            doomed.setdefault(id(entry), (entry, set()))[1].update(id(p) for p in parts)
        emptied: set[int] = set()
        split: dict[int, Entry] = {}
        for entry, ids in doomed.values():
            entry.parts = [p for p in entry.parts if id(p) not in ids]
            entry.dirty = True
            if not entry.parts:
                emptied.add(id(entry))
            elif entry.parts[-1].kind in self.leading_kinds:
                trailing = self._orphaned_leaders(entry)
                if trailing is not None:
                    split[id(entry)] = trailing
        if emptied or split:
            entries: list[Entry] = []
            for e in self.entries:
                if id(e) not in emptied:
                    entries.append(e)
                if id(e) in split:
                    entries.append(split[id(e)])
            self.entries = entries

    def _orphaned_leaders(self, entry: Entry) -> Entry | None:
        """The parts a removal left at the end of an entry, after its last call, as an entry of
        their own: they lead to nothing of the entry's any more, and the next pass's parse would
        not put them in it, so the rules after this one must not see them there either (results
        attached after the entry would land between the call and them)."""
        start = len(entry.parts)
        while start and entry.parts[start - 1].kind in self.leading_kinds:
            start -= 1
        if start == 0 or not any(p.kind == CALL for p in entry.parts[:start]):
            return None
        trailing = entry.parts[start:]
        del entry.parts[start:]
        first = trailing[0].raw
        # The part's own index when a rule has not replaced it, else the index of its old entry.
        origin = next((n for n, item in enumerate(self.body[self.key]) if item is first), entry.origin)
        return Entry(entry.role, trailing, {}, origin, dirty=True)

    def render(self, render_entry: Callable[[Entry], Any]) -> dict[str, Any]:
        """A new body: the input's fields, any replaced or removed top-level fields, the rendered messages."""
        body = dict(self.body)
        body.update(self.body_updates)
        for key in self.body_removals:
            body.pop(key, None)
        body[self.key] = [render_entry(entry) for entry in self.entries]
        return body
