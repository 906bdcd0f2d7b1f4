"""The entry point: ``sanitize(body, api=...)``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._errors import SanitizeError, UnknownAPIError
from ._model import SanitizeResult
from ._policy import Policy
from .dialects import DIALECTS
from .dialects._base import CLEAN, Dialect
from .dialects._shape import type_name
from .providers import ACCEPTED, TABLE, accepts, binding
from .rules import RULES, Context
from .validation._bedrock import captured_model
from .validation._openai_chat import openrouter_upstream

APIS = tuple(DIALECTS)

# The names sanitize() and validate() take for each format, aliases included (the table's).
SANITIZE_PROVIDERS = ACCEPTED
_DEFAULT_POLICY = Policy()
_RULES = {
    (api, provider): tuple(r for r in RULES if r.applies_to(api, provider))
    for api, bindings in TABLE.items()
    for provider in (None, *(b.rules for b in bindings))
}
# The rules the fast path asks one by one (Rule.clean): those a provider binds beyond its format's
# own, and those of the format whose action turns on the model or the policy.
_LOOKS = {
    key: tuple(r for r in rules if r not in _RULES[(key[0], None)] or r.looks_past(*key))
    for key, rules in _RULES.items()
}
# The format's own rules its check may suspect without knowing whether they must act (that turns
# on the model or the request): their quick look (Rule.clean) settles the suspicion.
_JUDGES = {key: {r.code: r for r in rules if r.judges_suspicion} for key, rules in _RULES.items()}


def sanitize(
    body: Any,
    *,
    api: str,
    policy: Policy | None = None,
    provider: str | None = None,
    model: str | None = None,
    betas: Iterable[str] = (),
) -> SanitizeResult:
    """Repair ``body`` so the provider accepts its transcript.

    Returns the repaired body and one :class:`Repair` per change. When nothing needs repair,
    ``result.body`` is ``body`` itself (so callers can forward the original bytes). The input
    is never mutated. A body of the wrong shape raises :class:`SanitizeError` naming the field.
    ``provider`` names where the body is bound when that is not the format's own provider
    (``mistral`` for an OpenAI Chat body, say): that provider's rules apply too; for ``openrouter``,
    those of the upstream the model's prefix names (``anthropic/``, ``mistralai/``, ``deepseek/``,
    ``moonshotai/``; OpenAI's for any other). ``model`` names
    the model where the body does not (a native Gemini body: the URL names it); otherwise the
    body's own ``model`` is used. Some repairs are for some models only (Gemini 3's thought
    signatures; the final assistant message a model without prefill refuses, which Bedrock and
    Vertex also name in the URL; text next to a toolUse, which Bedrock's Llama models refuse; a
    system message inside ``messages``, which Claude Opus 4.8 and later take). Which models take
    what is the capability table's (:mod:`sanitizer.capabilities`). ``betas`` are what the request
    declares of itself (its ``anthropic-beta`` header's values); they count where no model is named.
    """
    dialect, provider = _bound(body, api, provider)
    look = _quick_look(dialect, body, api, policy, provider, model, _declared(betas))
    if look is None:
        return SanitizeResult(body)
    ctx, first = look
    transcript = dialect.parse(body)
    for rule in _RULES[(api, provider)][first:]:
        rule.apply(transcript, ctx)
    if not ctx.repairs:
        return SanitizeResult(body)
    sent = {p.call_id for _, p in transcript.parts()}
    restore = {new: old for new, old in ctx.restore_ids.items() if new in sent}
    return SanitizeResult(dialect.render(transcript), ctx.repairs, restore)


def looks_clean(
    body: Any,
    *,
    api: str,
    policy: Policy | None = None,
    provider: str | None = None,
    model: str | None = None,
    betas: Iterable[str] = (),
) -> bool:
    """Whether :func:`sanitize` would return ``body`` unchanged on its quick check alone.

    The quick check reads only the transcript's skeleton (roles, ids, block types), at a fraction
    of a full repair's cost; False means the full pass must look, which may still find nothing.
    For a caller that decides where to run the full pass (the proxy keeps its event loop free of
    long repairs). Takes and raises what :func:`sanitize` does.
    """
    dialect, provider = _bound(body, api, provider)
    return _quick_look(dialect, body, api, policy, provider, model, _declared(betas)) is None


def _declared(betas: Iterable[str]) -> frozenset[str]:
    # One beta given as a string is one value, not its letters.
    return frozenset((betas,) if isinstance(betas, str) else betas)


def _bound(body: Any, api: str, provider: str | None) -> tuple[Dialect, str | None]:
    """The format's dialect and the provider whose rules bind the body (aliases resolved)."""
    dialect = DIALECTS.get(api)
    if dialect is None:
        raise UnknownAPIError(f"unknown api {api!r}; known: {', '.join(APIS)}")
    if provider is not None:
        # An alias (anthropic-openai-compat) gets the rules of the provider it names.
        provider = binding(api, provider).rules
    if not isinstance(body, dict):
        raise SanitizeError("", f"the request body must be a JSON object, not {type_name(body)}")
    if provider == "openrouter" and api == "openai-chat":
        # OpenRouter hands the body to the upstream its model's prefix names, whose rules then apply.
        provider = openrouter_upstream(body.get("model")) or provider
    return dialect, provider


def _quick_look(
    dialect: Dialect,
    body: dict[str, Any],
    api: str,
    policy: Policy | None,
    provider: str | None,
    model: str | None,
    betas: frozenset[str],
) -> tuple[Context, int] | None:
    """None when the quick check vouches for the body, else the context of the full pass and the
    index of the first rule it must apply: the rules ahead of it find nothing in a body no rule
    has changed. The format's own check names its suspects (Dialect.suspects); a suspect that
    judges its own suspicion (Rule.judges_suspicion) is asked, and a rule the check cannot vouch
    for (Rule.clean, a provider's own) is asked itself, or, past a format fault, suspected."""
    suspects = dialect.suspects(body)
    key = (api, provider)
    rules = _RULES[key]
    looks = _LOOKS[key]
    ctx: Context | None = None
    judges = _JUDGES[key]
    if suspects and judges and not suspects.isdisjoint(judges):
        ctx = _context(dialect, body, api, policy, provider, model, betas)
        suspects = suspects.difference(code for code in suspects if code in judges and judges[code].clean(body, ctx))
    if suspects == CLEAN:
        if not looks:
            return None
        ctx = ctx or _context(dialect, body, api, policy, provider, model, betas)
        for index, rule in enumerate(rules):
            if rule in looks and not rule.clean(body, ctx):
                return ctx, index
        return None
    ctx = ctx or _context(dialect, body, api, policy, provider, model, betas)
    if suspects is None:
        return ctx, 0
    for index, rule in enumerate(rules):
        if rule.code in suspects or rule in looks:
            return ctx, index
    return ctx, len(rules)


def _context(
    dialect: Dialect,
    body: dict[str, Any],
    api: str,
    policy: Policy | None,
    provider: str | None,
    model: str | None,
    betas: frozenset[str],
) -> Context:
    if model is None:
        named = captured_model(body) if api == "bedrock-converse" else body.get("model")
        model = named if isinstance(named, str) else None
    return Context(api, dialect, policy or _DEFAULT_POLICY, provider, model, betas=betas)


def validator_provider(api: str, provider: str | None) -> str | None:
    """The validator profile (see :mod:`sanitizer.providers`) for a body of ``api`` bound for
    ``provider``; None for None, or for a name the table does not know for ``api``.

    ``validate`` takes the same names as ``sanitize`` and resolves them itself; this names the
    profile it picks (``anthropic-openai-compat`` for a Chat body bound for ``anthropic``).
    """
    if provider is None or not accepts(api, provider):
        return None
    return binding(api, provider).profile
