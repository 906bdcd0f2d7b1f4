"""The records the sanitizer hands back: what it repaired and the body it produced."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Repair:
    """One change the sanitizer made to a transcript.

    ``message_index`` is the index of the affected message in the *input* body, so a user can
    find it in the payload they captured; ``None`` when the change concerns the request as a
    whole (for example an added ``tools`` definition).
    """

    code: str
    rule: str
    action: str
    message_index: int | None
    tool_call_id: str | None
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made building
# the result half the fixed cost of sanitize() on a short valid transcript (0.5 of 2.3 us).
@dataclass(slots=True)
class SanitizeResult:
    """The repaired body and the record of every repair.

    ``body`` is the very object that was passed in when ``repairs`` is empty. When a provider
    needs ids of its own shape (Mistral), ``restore_ids`` maps each id sent upstream back to the
    client's, so the proxy can show the agent its own ids in the answer.
    """

    body: dict[str, Any]
    repairs: list[Repair] = field(default_factory=list)
    restore_ids: dict[str, str] = field(default_factory=dict)
    """Tool-call ids rewritten for the provider (sent id -> the client's id), to map back in responses."""

    @property
    def changed(self) -> bool:
        return bool(self.repairs)
