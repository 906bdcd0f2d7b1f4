"""The provider table: for each wire format, the providers a body can be bound for.

One table, read by ``sanitize`` (which repair rules apply), ``validate`` (which provider's rules
and error texts judge the body), ``suture check``, strict mode and the route table, so the same
(api, provider) means the same thing everywhere. Each provider names:

- ``profile``: the validator's name for how the provider checks a body of this format. A gateway
  (LiteLLM) that translates a Chat body for Anthropic or Gemini is checked as those providers'
  OpenAI-compatible endpoints would check it, and one bound for Bedrock by Bedrock's rules on the
  Converse body the gateway makes of it.
  An Anthropic body bound for OpenAI or Mistral is checked by that provider's Chat rules on the
  body LiteLLM's adapter makes of it: what Suture's litellm route sends, and the gateways built
  on LiteLLM. An Anthropic body bound for DeepSeek is checked as DeepSeek's own Anthropic-compatible
  endpoint (``api.deepseek.com/anthropic``) checks it, which takes it untranslated (LiteLLM sends
  it there too: ``DeepSeekAnthropicMessagesConfig``).
- ``rules``: the provider name the repair rules see (``Rule.applies_to``).
- ``bridged``: a gateway converts the body into another format before the provider sees it
  (LiteLLM's Responses bridge for DeepSeek and Mistral), so nothing the format keeps on its own server
  (OpenAI's stored responses, conversations, item references) reaches the provider.
- ``aliases``: other names for the same binding (``anthropic-openai-compat``, the validator's name
  for a Chat body bound for Anthropic; ``deepseek-anthropic-compat``, for an Anthropic body bound
  for DeepSeek).

The first provider of each format is its own, used when none is named.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ._errors import UnknownAPIError, UnknownProviderError

Api = Literal["openai-chat", "openai-responses", "anthropic-messages", "gemini", "bedrock-converse"]
"""The wire formats Suture reads, by the names ``sanitize``, ``validate`` and the CLI's ``--api`` take."""


@dataclass(frozen=True, slots=True)
class Binding:
    """One provider a body of ``api`` can be bound for."""

    api: str
    provider: str
    profile: str
    """The validator profile that judges the body."""
    rules: str
    """The provider the repair rules are chosen for."""
    aliases: tuple[str, ...] = ()
    bridged: bool = False
    """A gateway converts the body into another format: the format's server-side state is not there."""


def _own(api: str, *providers: str) -> tuple[Binding, ...]:
    return tuple(Binding(api, p, p, p) for p in providers)


TABLE: Mapping[str, tuple[Binding, ...]] = MappingProxyType(
    {
        "openai-chat": (
            *_own(
                "openai-chat",
                "openai",
                "azure",
                "mistral",
                "deepseek",
                "groq",
                "moonshot",
                "minimax",
                "openrouter",
                "vllm",
                "cerebras",
                "dashscope",
                "llamacpp",
                "fireworks",
                "xai",
                "zhipu",
                "nim",
                "lmstudio",
                "ollama",
                "sglang",
                "sambanova",
                "together",
            ),
            Binding("openai-chat", "anthropic", "anthropic-openai-compat", "anthropic", ("anthropic-openai-compat",)),
            Binding("openai-chat", "bedrock", "bedrock", "bedrock"),
            Binding("openai-chat", "gemini", "gemini-openai-compat", "gemini", ("gemini-openai-compat",)),
        ),
        "anthropic-messages": (
            *_own("anthropic-messages", "anthropic", "bedrock", "vertex"),
            *_own("anthropic-messages", "openai", "mistral"),
            Binding(
                "anthropic-messages",
                "deepseek",
                "deepseek-anthropic-compat",
                "deepseek",
                ("deepseek-anthropic-compat",),
            ),
        ),
        # DeepSeek and Mistral have no Responses API: LiteLLM's bridge sends them the body as
        # Chat (Suture's litellm route), which their Chat rules then judge. vLLM serves its own
        # (``/v1/responses``), without OpenAI's stored items unless its store is switched on.
        "openai-responses": (
            *_own("openai-responses", "openai", "azure", "vllm"),
            Binding("openai-responses", "deepseek", "deepseek", "deepseek", bridged=True),
            Binding("openai-responses", "mistral", "mistral", "mistral", bridged=True),
        ),
        "gemini": _own("gemini", "gemini", "vertex"),
        "bedrock-converse": _own("bedrock-converse", "bedrock"),
    }
)

# Every accepted name, aliases included, resolved once: the request path only looks names up.
_BY_NAME: dict[tuple[str, str | None], Binding] = {
    (api, name): b for api, bindings in TABLE.items() for b in bindings for name in (b.provider, *b.aliases)
}
_BY_NAME.update({(api, None): bindings[0] for api, bindings in TABLE.items()})

ACCEPTED: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {api: tuple(name for b in bindings for name in (b.provider, *b.aliases)) for api, bindings in TABLE.items()}
)
"""Every provider name ``sanitize`` and ``validate`` take for each format, aliases included."""

PROFILES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {api: tuple(dict.fromkeys(b.profile for b in bindings)) for api, bindings in TABLE.items()}
)
"""The validator's profiles for each format: how each distinct provider checks it."""


def binding(api: str, provider: str | None) -> Binding:
    """The table's entry for ``provider`` (None: the format's own), or a typed error naming the known ones."""
    found = _BY_NAME.get((api, provider))
    if found is not None:
        return found
    if api not in TABLE:
        raise UnknownAPIError(f"unknown api {api!r}; known: {', '.join(TABLE)}")
    raise UnknownProviderError(f"unknown provider {provider!r} for api {api!r}; known: {', '.join(ACCEPTED[api])}")


def accepts(api: str, provider: str) -> bool:
    """Whether ``provider`` is a name the table knows for ``api``."""
    return (api, provider) in _BY_NAME
