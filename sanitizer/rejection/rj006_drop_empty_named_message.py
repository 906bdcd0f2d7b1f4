from __future__ import annotations

from .._ir import Transcript
from ..rules._base import Context
from ._strategy import Strategy
from ._target import Named, blank


class DropEmptyNamedMessage(Strategy):
    """
    What it repairs:
        A message the provider names that holds nothing: no block, or only blank text.

    Why:
        Providers refuse empty turns in their own words, e.g. "messages[2]: content must not be
        empty" or "contents[3]: a turn needs at least one part".

    Example:
        Before: user "Hi" / assistant "" / user "Hello?"; refused naming messages[1]
        After: user "Hi" / user "Hello?" (merged later by the provider's own rules, if any)

    Safety:
        Only a message with nothing in it goes; its (blank) content is kept in the repair record.
    """

    code = "RJ006"
    name = "drop-empty-named-message"

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        entry = target.entry
        if entry is None or target.part is not None or not all(blank(p) for p in entry.parts):
            return
        transcript.entries = [e for e in transcript.entries if e is not entry]
        ctx.report(self, "dropped", entry, None, "dropped the empty message the provider refused")
