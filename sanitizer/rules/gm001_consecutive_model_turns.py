from __future__ import annotations

from typing import ClassVar

from .._ir import Entry, Transcript
from ._base import Context, Rule


class ConsecutiveModelTurns(Rule):
    """
    What it repairs:
        Two or more model turns in a row, where the later one calls a function: a partial
        answer or an interrupt-recovery turn stored as its own model turn right before the
        model's function call.

    Why:
        Gemini: "Please ensure that function call turn comes immediately after a user turn
        or after a function response turn."

    Example:
        Before: user "weather?" / model "Let me check." / model functionCall get_weather
        After:  user "weather?" / model ["Let me check.", functionCall get_weather]

    Safety:
        Merges the turns' parts in order; nothing is dropped. Only runs of model turns are
        merged, and only when one of them calls a function.
    """

    code = "GM001"
    name = "consecutive-model-turns"
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G1",)
    apis = frozenset({"gemini"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        runs: list[list[Entry]] = []
        for entry in transcript.entries:
            if runs and entry.role == "assistant" == runs[-1][-1].role:
                runs[-1].append(entry)
            else:
                runs.append([entry])
        merged: list[Entry] = []
        for run in runs:
            head = run[0]
            if len(run) > 1 and any(e.calls() for e in run[1:]):
                for entry in run[1:]:
                    ctx.report(self, "merged", entry, None, f"merged into the model turn {head.origin} before it")
                head.parts = head.parts + [p for entry in run[1:] for p in entry.parts]
                head.dirty = True
                merged.append(head)
            else:
                merged += run
        transcript.entries = merged
