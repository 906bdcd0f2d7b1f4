"""What every strategy is: a rule (a permanent code, a name, docs) that repairs what a refusal names."""

from __future__ import annotations

from .._ir import Transcript
from ..rules._base import Context, Rule
from ._target import Named


class Strategy(Rule):
    """A generic repair of the message, block or id a provider's refusal names.

    Strategies never run in ``sanitize()``: only on a refusal, on what it names, and the first
    that changes the body is the one applied.
    """

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        raise TypeError(f"{self.code} repairs what a refusal names: call repair()")

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        raise NotImplementedError
