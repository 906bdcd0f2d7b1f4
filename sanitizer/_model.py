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


@dataclass(frozen=True, slots=True)
class SanitizeResult:
    """The repaired body and the record of every repair.

    ``body`` is the very object that was passed in when ``repairs`` is empty.
    """

    body: dict[str, Any]
    repairs: list[Repair] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.repairs)
