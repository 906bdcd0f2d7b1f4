"""Loading the golden before/after/repairs fixtures under tests/sanitizer/golden/."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent.parent / "sanitizer" / "golden"


@dataclass(frozen=True)
class Case:
    path: Path
    api: str
    policy: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any] | None
    repairs: list[dict[str, Any]] | None
    expect_valid: bool = True
    provider: str | None = None
    model: str | None = None
    """The model the request is for, where the body does not name it (a native Gemini URL's)."""
    betas: tuple[str, ...] = ()
    """The request's ``anthropic-beta`` values: what it declares of itself."""

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"


def load(path: Path) -> Case:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return Case(
        path,
        doc["api"],
        doc.get("policy") or {},
        doc["before"],
        doc["after"],
        doc["repairs"],
        doc.get("expect_valid", True),
        doc.get("provider"),
        doc.get("model"),
        tuple(doc.get("betas") or ()),
    )


def all_cases() -> list[Case]:
    return [load(p) for p in sorted(GOLDEN.glob("*/*.json"))]


def rewrite(case: Case, after: dict[str, Any], repairs: list[dict[str, Any]]) -> None:
    doc = json.loads(case.path.read_text(encoding="utf-8"))
    doc["after"] = after
    doc["repairs"] = repairs
    case.path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
