"""The litellm route table of the routing tests: one loopback fake per provider, reached through
litellm by model family, and the keys Suture and the client hold."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

import pytest

from proxy.settings import Settings
from tests._support.provider_fakes import ProviderFake

# For the litellm tests' pytestmark: found without importing it (that takes seconds).
NO_LITELLM = pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="needs suture[litellm]")

GEMINI_KEY_ENV = "SUTURE_TEST_ROUTING_GEMINI_KEY"
GEMINI_KEY = "gemini-key-held-by-suture"
CLIENT_KEY = "sk-client-key"


@dataclass(frozen=True)
class Provider:
    """A provider reached through litellm: its route, the client's model name and its fake."""

    name: str
    model: str
    fake: ProviderFake
    url: str


# name -> (wire format, provider rules the fake applies, litellm model template, client's model)
PROVIDERS: dict[str, tuple[str, str | None, str, str]] = {
    "anthropic": ("anthropic-messages", "anthropic", "anthropic/{model}", "claude-fake-4"),
    "gemini": ("gemini", "gemini", "gemini/{model}", "gemini-fake-2.5"),
    "bedrock": ("bedrock-converse", "bedrock", "bedrock/converse/{model}", "anthropic.claude-fake-v1:0"),
    "mistral": ("openai-chat", "mistral", "mistral/{model}", "mistral-fake-large"),
    "compat": ("openai-chat", "deepseek", "openai/{model}", "compat-fake-chat"),
}


def routed_settings(providers: dict[str, Provider], **extra: Any) -> Settings:
    """Routes by model family, each to its provider's fake through litellm."""
    upstreams: dict[str, Any] = {}
    for name, (_, rules, template, _) in PROVIDERS.items():
        upstreams[f"{name}-via-litellm"] = {
            "protocol": "litellm",
            "model": template,
            "api_base": providers[name].url,
            "provider": rules,
        }
    upstreams["gemini-via-litellm"]["api_key_env"] = GEMINI_KEY_ENV
    routes = [
        {"match": "claude-*", "upstream": "anthropic-via-litellm"},
        {"match": "gemini-*", "upstream": "gemini-via-litellm"},
        {"match": "anthropic.*", "upstream": "bedrock-via-litellm"},
        {"match": "mistral-*", "upstream": "mistral-via-litellm"},
        {"match": "compat-fake-chat", "upstream": "compat-via-litellm"},
    ]
    return Settings(upstreams=upstreams, routes=routes, **extra)
