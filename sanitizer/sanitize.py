"""The entry point: ``sanitize(body, api=...)``."""

from __future__ import annotations

from typing import Any

from ._errors import SanitizeError, UnknownAPIError
from ._model import SanitizeResult
from ._policy import Policy
from .dialects import DIALECTS
from .dialects._shape import type_name
from .dialects.gemini import unsigned_calls
from .providers import ACCEPTED, TABLE, accepts, binding
from .rules import RULES, Context, Rule
from .rules.an009_unsupported_prefill import refuses_prefill
from .validation._bedrock import captured_model, wants_tool_use_alone
from .validation._gemini import signature_required
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
# The rules a provider binds beyond its format's own, which the fast path asks one by one.
_OWN_RULES = {key: tuple(r for r in rules if r not in _RULES[(key[0], None)]) for key, rules in _RULES.items()}


def sanitize(
    body: Any, *, api: str, policy: Policy | None = None, provider: str | None = None, model: str | None = None
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
    Vertex also name in the URL; text next to a toolUse, which Bedrock's Llama models refuse).
    """
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
    rules = _RULES[(api, provider)]
    policy = policy or _DEFAULT_POLICY
    if model is None:
        named = captured_model(body) if api == "bedrock-converse" else body.get("model")
        model = named if isinstance(named, str) else None
    own = _OWN_RULES[(api, provider)]
    if (
        dialect.looks_clean(body)
        and (api != "gemini" or not _wants_signatures(body, policy, model))
        and (api != "anthropic-messages" or not _refused_prefill(body, policy, model, provider))
        and (api != "bedrock-converse" or not wants_tool_use_alone(model))
        # The provider's own rules each take a quick look too (Rule.clean): most say no repair.
        and (not own or _all_clean(own, body, Context(api, dialect, policy, provider, model)))
    ):
        return SanitizeResult(body)
    transcript = dialect.parse(body)
    ctx = Context(api, dialect, policy, provider, model)
    for rule in rules:
        rule.apply(transcript, ctx)
    if not ctx.repairs:
        return SanitizeResult(body)
    sent = {p.call_id for _, p in transcript.parts()}
    restore = {new: old for new, old in ctx.restore_ids.items() if new in sent}
    return SanitizeResult(dialect.render(transcript), ctx.repairs, restore)


def _all_clean(rules: tuple[Rule, ...], body: dict[str, Any], ctx: Context) -> bool:
    return all(rule.clean(body, ctx) for rule in rules)


def _wants_signatures(body: dict[str, Any], policy: Policy, model: str | None) -> bool:
    # A Gemini 3 transcript without thought signatures is a valid Gemini 2 one: only the model,
    # which a native body does not name, tells them apart, so looks_clean cannot. Looked for
    # apart, and only for those models, so every other clean body keeps its single cheap pass.
    return policy.missing_thought_signature == "dummy" and signature_required(model) and unsigned_calls(body)


def _refused_prefill(body: dict[str, Any], policy: Policy, model: str | None, provider: str | None) -> bool:
    # A valid prefill on one model is a 400 on another, and the policy decides whether it goes:
    # neither is the body's to say, so looks_clean cannot. One look at the last message.
    if policy.trailing_assistant == "keep":
        return False
    messages = body.get("messages")
    last = messages[-1] if type(messages) is list and messages else None
    if type(last) is not dict or last.get("role") != "assistant":
        return False
    # Bound for Mistral, through LiteLLM's adapter, no final assistant message goes (AN009).
    return policy.trailing_assistant == "drop" or refuses_prefill(model) or provider == "mistral"


def validator_provider(api: str, provider: str | None) -> str | None:
    """The validator profile (see :mod:`sanitizer.providers`) for a body of ``api`` bound for
    ``provider``; None for None, or for a name the table does not know for ``api``.

    ``validate`` takes the same names as ``sanitize`` and resolves them itself; this names the
    profile it picks (``anthropic-openai-compat`` for a Chat body bound for ``anthropic``).
    """
    if provider is None or not accepts(api, provider):
        return None
    return binding(api, provider).profile
