"""Which work leaves the event loop for a worker thread: a long transcript's repair.

The rules are Python code, about 2-3.5 µs per message, and the interpreter lets one thread run at
a time: while a worker thread repairs, the event loop gets it back every switch interval (5 ms),
so every other stream of the worker (and /healthz) waits at most that long instead of for the
whole repair. Shorter work gains nothing from a thread (the loop would wait for the interpreter
as long) and would pay a handoff. The JSON parse and serialisation gain nothing at any size:
orjson holds the interpreter throughout (a 2 MB parse stalls the loop as long from a worker
thread as on it), so they run where the caller is.
"""

from __future__ import annotations

from typing import Any

# About 5 ms of rules: past this, a repair runs in a worker thread.
OFF_LOOP_MESSAGES = 2000
# The fields that hold a transcript (Chat, Messages and Converse; Responses; Gemini).
TRANSCRIPT_KEYS = ("messages", "input", "contents")


def long_transcript(body: Any) -> bool:
    """Whether ``body``'s transcript is long enough for its repair to leave the event loop."""
    return isinstance(body, dict) and any(
        type(items) is list and len(items) > OFF_LOOP_MESSAGES for items in map(body.get, TRANSCRIPT_KEYS)
    )
