"""The entry point: ``sanitize(body, api=...)``."""

from __future__ import annotations

from typing import Any

from ._errors import SanitizeError, UnknownAPIError
from ._model import SanitizeResult
from ._policy import Policy
from .dialects import DIALECTS
from .dialects._shape import type_name
from .rules import RULES, Context

APIS = tuple(DIALECTS)
_DEFAULT_POLICY = Policy()
_RULES_BY_API = {api: tuple(r for r in RULES if r.applies_to(api)) for api in APIS}


def sanitize(body: Any, *, api: str, policy: Policy | None = None) -> SanitizeResult:
    """Repair ``body`` so the provider accepts its transcript.

    Returns the repaired body and one :class:`Repair` per change. When nothing needs repair,
    ``result.body`` is ``body`` itself (so callers can forward the original bytes). The input
    is never mutated. A body of the wrong shape raises :class:`SanitizeError` naming the field.
    """
    dialect = DIALECTS.get(api)
    if dialect is None:
        raise UnknownAPIError(f"unknown api {api!r}; known: {', '.join(APIS)}")
    if not isinstance(body, dict):
        raise SanitizeError("", f"the request body must be a JSON object, not {type_name(body)}")
    if dialect.looks_clean(body):
        return SanitizeResult(body)
    transcript = dialect.parse(body)
    ctx = Context(api, dialect, policy or _DEFAULT_POLICY)
    for rule in _RULES_BY_API[api]:
        rule.apply(transcript, ctx)
    if not ctx.repairs:
        return SanitizeResult(body)
    return SanitizeResult(dialect.render(transcript), ctx.repairs)
