"""Which fixes a request gets before its first attempt, and where what its refusals teach is kept.

An upstream's fixes are the config's (``fixes:`` of its section, for the models they match) or,
for models the config says nothing of, those learnt from its refusals (``proxy.learnt``). The
config always wins: a learnt fix never overrides what it states.
"""

from __future__ import annotations

from sanitizer import SanitizeResult

from ..exchange import ProxyState
from ..learnt import School
from ..settings import ProviderSettings
from .model_routes import Target


def school_of(state: ProxyState, provider: str, cfg: ProviderSettings, target: Target | None) -> School:
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
