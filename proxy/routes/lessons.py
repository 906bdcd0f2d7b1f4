"""Which fixes a request gets before its first attempt, and where what its refusals teach is kept.

An upstream's fixes are the config's (``fixes:`` of its section, for the models they match) or,
for models the config says nothing of, those learnt from its refusals (``proxy.learnt``). The
config always wins: a learnt fix never overrides what it states.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from sanitizer import SanitizeResult
from sanitizer.rejection import Lesson

from ..settings import RouteSettings, StatedFix
from .context import ProxyState
from .model_routes import Target

STATED = "stated in the configuration"
LEARNT = "learnt from an earlier refusal of this upstream"


@dataclass(frozen=True, slots=True)
class School:
    """An upstream as lessons know it: its name, where it points, what the config states of it."""

    upstream: str
    base_url: str
    stated: tuple[StatedFix, ...] = ()
    learns: bool = True

    def lessons(self, state: ProxyState, model: str | None) -> tuple[tuple[Lesson, ...], str]:
        """The fixes for ``model`` and where they come from (:data:`STATED`, :data:`LEARNT`)."""
        if model is None:
            return (), LEARNT
        stated = [fix for fix in self.stated if fnmatch.fnmatchcase(model, fix.models)]
        if stated:
            return tuple(lesson for fix in stated for lesson in fix.lessons()), STATED
        if state.learnt is None or not self.learns:
            return (), LEARNT
        return state.learnt.lessons_for(self.upstream, self.base_url, model), LEARNT


def school_of(state: ProxyState, provider: str, cfg: RouteSettings, target: Target | None) -> School:
    """The upstream a request goes to: a route table upstream (``target``), or ``provider``'s section."""
    if target is None:
        return School(provider, cfg.upstream, cfg.fixes, cfg.learn)
    section = state.settings.upstreams.get(target.name)
    where = target.base_url or target.api_base or f"litellm:{target.model}"
    if section is None:
        return School(target.name, where)
    return School(target.name, where, section.fixes, section.learn)


def after_lessons(taught: SanitizeResult, result: SanitizeResult) -> SanitizeResult:
    """One result of the lessons' pass (``taught``) and the rules' pass on its body (``result``)."""
    restore = {new: taught.restore_ids.get(old, old) for new, old in result.restore_ids.items()}
    for new, old in taught.restore_ids.items():
        restore.setdefault(new, old)
    return SanitizeResult(result.body, [*taught.repairs, *result.repairs], restore)
