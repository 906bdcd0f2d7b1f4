"""The Chat Completions format's rules for any provider: OpenAI-compatible servers by their own
rules (``_openai_chat``), the others (Anthropic's and Gemini's compatibility endpoints, Bedrock,
OpenRouter's upstreams, a provider LiteLLM translates a body for) through the conversion that
provider's server makes (``_convert``). The one module that knows both, so neither imports the
other."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ._convert import (
    litellm_chat_view,
    litellm_responses_view,
    validate_via_anthropic,
    validate_via_converse,
    validate_via_gemini,
)
from ._envelope import violation, wrap_openrouter
from ._openai_chat import model_name, openrouter_upstream, parse, validate_compatible
from ._shape import body_dict
from ._violation import Violation


def validate_openai_chat(body: object, provider: str, model: str | None = None) -> list[Violation]:
    """The rules ``provider`` applies to an OpenAI-shaped Chat Completions body (for ``model``, if
    given, else the body's own)."""
    if provider == "anthropic-openai-compat":
        return validate_via_anthropic(body)
    if provider == "gemini-openai-compat":
        return validate_via_gemini(body, model)
    if provider == "bedrock":
        return validate_via_converse(body, model)
    if provider == "openrouter":
        return _openrouter(parse(body)[0])
    return validate_compatible(body, provider)


def _openrouter(b: dict[str, Any]) -> list[Violation]:
    upstream = openrouter_upstream(b.get("model"))
    if upstream is None:
        return [wrap_openrouter(v, "openai") for v in validate_compatible(b, "openai")]
    # The upstream is asked for its own model name; OpenRouter writes Claude's versions with a dot.
    name = model_name(b.get("model"))
    if upstream == "anthropic":
        found = validate_via_anthropic({**b, "model": name.replace(".", "-")})
        # OpenRouter calls Anthropic's own API, whose error body it passes on.
        native = [violation("anthropic", v.rule, v.message, v.message_index) for v in found]
        return [wrap_openrouter(v, "anthropic") for v in native]
    return [wrap_openrouter(v, upstream) for v in validate_openai_chat({**b, "model": name}, upstream)]


def validate_via_litellm(body: object, provider: str, model: str | None = None) -> list[Violation]:
    """An Anthropic body as LiteLLM's adapter sends it to ``provider``'s Chat endpoint, checked by
    that provider's rules; each violation's ``message_index`` points into the Anthropic body."""
    b = body_dict(body)
    converted, index_map = litellm_chat_view(b)
    found = validate_openai_chat({"model": b.get("model"), "messages": converted}, provider, model)
    return [v if v.message_index is None else replace(v, message_index=index_map[v.message_index]) for v in found]


def validate_responses_via_litellm(body: object, provider: str, model: str | None = None) -> list[Violation]:
    """A Responses body as LiteLLM's bridge sends it to ``provider``'s Chat endpoint, checked by that
    provider's rules; each violation's ``message_index`` points into ``input`` (None: the
    ``instructions``)."""
    b = body_dict(body)
    converted, index_map = litellm_responses_view(b)
    chat: dict[str, Any] = {"model": b.get("model"), "messages": converted}
    tools = [
        {"type": "function", "function": {"name": t.get("name"), "parameters": t.get("parameters") or {}}}
        for t in b.get("tools") or ()
        if isinstance(t, dict) and t.get("type") == "function"
    ]
    if tools:
        chat["tools"] = tools
    found = validate_openai_chat(chat, provider, model)
    return [v if v.message_index is None else replace(v, message_index=index_map[v.message_index]) for v in found]
