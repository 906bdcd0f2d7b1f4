from __future__ import annotations

from typing import ClassVar

from .._ir import THINKING, Part, Transcript
from ._base import Context, Rule


class ReasoningWithoutSummary(Rule):
    """
    What it repairs:
        An OpenAI Responses ``reasoning`` item replayed without its ``summary`` field: a client
        or SDK that drops an empty summary when it stores or serialises the item (Go's
        ``omitzero`` on a nil slice), or one that rebuilds the item from its encrypted content.

    Why:
        The field is required even when the model wrote no summary. OpenAI Responses (and
        Azure): "Missing required parameter: 'input[7].summary'." (AAswordman/Operit#797,
        microsoft/agent-framework-go#783), on every turn after the first reasoning item.

    Example:
        Before: user "hi" / reasoning rs_1 (encrypted_content, no summary) / function_call
                call_1 / output call_1
        After:  user "hi" / reasoning rs_1 (encrypted_content, summary []) / function_call
                call_1 / output call_1

    Safety:
        Adds ``"summary": []``, what the server sends for a reasoning item the model wrote no
        summary for, and nothing else: the item's id and encrypted content are untouched. A
        summary that is present, whatever its value, is left to the server.
    """

    code = "RS007"
    name = "reasoning-without-summary"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R9",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != THINKING or "summary" in part.raw:
                    continue
                ctx.report(self, "added", entry, None, "added the empty summary the reasoning item lacked")
                entry.parts[n] = Part(part.kind, {**part.raw, "summary": []}, part.call_id, part.name)
                entry.dirty = True
