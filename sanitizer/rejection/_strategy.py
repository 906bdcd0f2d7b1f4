"""What every strategy is: a rule (a permanent code, a name, docs) that repairs what a refusal names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .._ir import Transcript
from ..rules._base import Context, Repairer
from ._target import Named


@dataclass(frozen=True, slots=True)
class Lesson:
    """What fixed a refusal, in the form that applies to every later body for the same upstream.

    ``fix`` is ``rules`` (the rules that clear the violation ``codes`` name) or a strategy's code
    (``RJ011``); ``keys`` are what a strategy needs to know of the refusal to do the same again
    (the field names a provider said it does not accept).
    """

    fix: str
    codes: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fix": self.fix}
        if self.codes:
            out["codes"] = list(self.codes)
        if self.keys:
            out["keys"] = list(self.keys)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Lesson:
        """The lesson ``as_dict`` wrote; ValueError names what is wrong with anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("fix"), str) or not data["fix"]:
            raise ValueError(f"a lesson is an object with a 'fix' string, not {data!r}")
        unknown = set(data) - {"fix", "codes", "keys"}
        if unknown:
            raise ValueError(f"a lesson has no field(s) {', '.join(sorted(unknown))}")
        lists = {}
        for name in ("codes", "keys"):
            value = data.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"a lesson's {name!r} is a list of strings, not {value!r}")
            lists[name] = tuple(value)
        return cls(data["fix"], lists["codes"], lists["keys"])

    def label(self) -> str:
        """One line for a person: ``RJ011``, ``rules PV009``, ``RJ012 keys cot_id, cot_summary``."""
        parts = [self.fix, *([", ".join(self.codes)] if self.codes else [])]
        if self.keys:
            parts.append("keys " + ", ".join(self.keys))
        return " ".join(parts)


class Strategy(Repairer):
    """A generic repair of the message, block or id a provider's refusal names.

    Strategies never run in ``sanitize()``: only on a refusal, on what it names, and the first
    that changes the body is the one applied. A ``learnable`` strategy also has a form for the
    whole transcript (:meth:`everywhere`): once it fixed a refusal of an upstream, the proxy
    applies that form before the first attempt of later requests to it (``apply_lessons``).
    """

    learnable: ClassVar[bool] = False

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        raise NotImplementedError

    def lesson(self, target: Named) -> Lesson | None:
        """What to remember of this strategy's fix of the refusal ``target`` read; None: nothing
        (a strategy whose fix only makes sense where a refusal points)."""
        return Lesson(self.code) if self.learnable else None

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        """The fix ``lesson`` recorded, wherever in ``transcript`` it applies, before any refusal."""
        raise TypeError(f"{self.code} is not learnable")
