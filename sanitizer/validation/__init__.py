"""Provider transcript validation: which rules a request body breaks, with each provider's exact 400.

Pure: no I/O, no logging, no state. ``validate(body, api=..., provider=...)`` returns every
violation it finds, in the order the provider checks, so the first one is the error the
provider would answer. Each API's module documents its check order and the catalogue rules
(``/work/shared/PROVIDER_RULES.md``) it does not check, and why:

- ``anthropic-messages`` (``_anthropic``): providers ``anthropic``, ``vertex`` (same body) and
  ``bedrock`` (InvokeModel: ``{"message": ...}`` with ``x-amzn-ErrorType: ValidationException``);
  ``openai`` and ``mistral`` judge the Chat body LiteLLM's adapter makes of it (``_convert``);
- ``openai-chat`` (``_openai_chat``, ``_convert``): OpenAI, Azure and the compatible providers;
  ``bedrock`` judges the Converse body a gateway makes of it (``_convert``);
- ``openai-responses`` (``_responses``), ``bedrock-converse`` (``_bedrock``);
- ``gemini`` (``_gemini``): providers ``gemini`` and ``vertex``.

A body of the wrong shape (``messages`` not an array, a message not an object...) raises
:class:`sanitizer._errors.SanitizeError` with the field's path.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..capabilities import model_capabilities
from ..providers import binding
from ._anthropic import validate_anthropic
from ._bedrock import validate_bedrock
from ._chat import validate_openai_chat, validate_responses_via_litellm, validate_via_litellm
from ._convert import CHAT_VIA_LITELLM
from ._envelope import PROVIDERS, error_envelope, resolve
from ._gemini import validate_gemini
from ._responses import validate_responses
from ._violation import Violation

__all__ = ["PROVIDERS", "Violation", "error_envelope", "validate"]


def validate(
    body: object,
    *,
    api: str,
    provider: str | None = None,
    model: str | None = None,
    betas: Iterable[str] = (),
) -> list[Violation]:
    """Every rule of ``provider`` (default: the API's own) that ``body`` breaks, first-reported first.

    ``model`` is the model the request is for, where the body does not say (a native Gemini body:
    the model is in the URL); a Chat body's own ``model`` is used when it is not given. Some rules
    hold for some models only (Gemini 3's thought signatures; text next to a toolUse, which
    Bedrock's Llama models refuse: a Converse body's model is in the URL; a system message inside
    an Anthropic body's ``messages``, which Claude Opus 4.8 and later take: the capability table,
    :mod:`sanitizer.capabilities`). ``betas`` are what the request declares of itself (its
    ``anthropic-beta`` values), which count where no model is named, as for ``sanitize``.

    Raises ``UnknownAPIError`` / ``UnknownProviderError`` (listing the known names) for an
    unknown ``api`` or a ``provider`` not valid for it, and ``SanitizeError`` for a body that
    does not have the API's shape. An empty list means the provider accepts the transcript.
    """
    resolved = resolve(api, provider)
    if api == "anthropic-messages":
        if resolved in CHAT_VIA_LITELLM:
            # Bound for a Chat provider: what reaches it is LiteLLM's conversion of the body.
            return validate_via_litellm(body, resolved, model)
        named = model if model is not None else (body.get("model") if isinstance(body, dict) else None)
        declared = (betas,) if isinstance(betas, str) else betas
        capabilities = model_capabilities(
            binding(api, provider).provider, named if isinstance(named, str) else None, declared
        )
        return validate_anthropic(body, resolved, capabilities=capabilities)
    if api == "openai-chat":
        return validate_openai_chat(body, resolved, model)
    if api == "openai-responses":
        if binding(api, provider).bridged:
            # Bound for a Chat provider: what reaches it is LiteLLM's bridge's conversion of the body.
            return validate_responses_via_litellm(body, resolved, model)
        return validate_responses(body, resolved)
    if api == "gemini":
        return validate_gemini(body, resolved, model)
    return validate_bedrock(body, resolved, model)
