"""Where an answer stands, and the only moves between those places (h11's style: a move the table
does not allow is a bug in this client, raised, never taken).

::

    AWAITING_HEAD ──1xx head──▶ INTERIM ──its end──▶ AWAITING_HEAD
    AWAITING_HEAD ──head──▶ BODY ──end (or the close)──▶ COMPLETE
    AWAITING_HEAD ──head of the answer to HEAD──▶ COMPLETE
    AWAITING_HEAD, INTERIM, BODY ──error──▶ FAILED
    any but RELEASED ──handed back to its connection──▶ RELEASED

What the upstream does wrong is a ``RemoteProtocolError`` and a move to FAILED, never a
:class:`TransitionError`: the parser's callbacks only move as the table allows and refuse the rest.
"""

from __future__ import annotations

import enum


class State(enum.IntEnum):
    """Where an answer stands. Whether its head arrived before it failed is not a state:
    ``status_code`` says so (0 until the final head is in)."""

    # An IntEnum hashes as an int (in C): a set of states is a cheap test on a path run per read.
    AWAITING_HEAD = enum.auto()
    """Before the final answer's head is complete (none of it yet, or part of it)."""
    INTERIM = enum.auto()
    """A 1xx head is in (103 Early Hints); the parser ends its message before the next head."""
    BODY = enum.auto()
    """The head is in (``status_code`` and ``headers``); the body is arriving."""
    COMPLETE = enum.auto()
    """All of the answer is in; unread body bytes may still be buffered."""
    FAILED = enum.auto()
    """No complete answer: ``_error`` says why."""
    RELEASED = enum.auto()
    """Handed back to its connection, which reuses or closes it; nothing more is read."""


# Module names for the states: a global is quicker to reach than an enum's attribute.
AWAITING_HEAD = State.AWAITING_HEAD
INTERIM = State.INTERIM
BODY = State.BODY
COMPLETE = State.COMPLETE
FAILED = State.FAILED
RELEASED = State.RELEASED

ALLOWED: dict[State, frozenset[State]] = {
    AWAITING_HEAD: frozenset({INTERIM, BODY, COMPLETE, FAILED, RELEASED}),
    INTERIM: frozenset({AWAITING_HEAD, FAILED, RELEASED}),
    BODY: frozenset({COMPLETE, FAILED, RELEASED}),
    COMPLETE: frozenset({RELEASED}),
    FAILED: frozenset({RELEASED}),
    RELEASED: frozenset(),
}

OVER = frozenset({COMPLETE, FAILED, RELEASED})
"""The states in which no more of the answer is wanted: a byte arriving then is past its end."""


class TransitionError(RuntimeError):
    """A move the table does not allow: a bug in this client, never the upstream's doing."""


def move(current: State, wanted: State) -> State:
    """``wanted``, if the table allows it from ``current``; raises :class:`TransitionError`."""
    if wanted not in ALLOWED[current]:
        raise TransitionError(f"an answer cannot go from {current.name} to {wanted.name}")
    return wanted
