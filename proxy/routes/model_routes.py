"""The model routes (``routes:`` in the settings): a request's ``model`` picks its upstream,
compiled once at start-up. Not to be confused with the native route table (``table.py``), which
says what each of Suture's paths is."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import SecretStr

from sanitizer.providers import accepts

from ..settings import BUILTIN_TARGETS, ConfigError, RejectionRepairSettings, Settings, key_problem

Protocol = Literal["openai", "anthropic", "litellm"]

# The client formats a native upstream of each protocol serves as they are.
PROTOCOL_APIS: dict[str, tuple[str, ...]] = {
    "openai": ("openai-chat", "openai-responses"),
    "anthropic": ("anthropic-messages",),
}


@dataclass(frozen=True)
class Target:
    """Where a matched request goes. ``builtin`` targets are the ``openai:``/``anthropic:`` sections."""

    name: str
    protocol: Protocol
    provider: str | None = None
    base_url: str | None = None
    model: str = "{model}"
    api_base: str | None = None
    api_key: SecretStr | None = None
    builtin: bool = False
    repairs_for: frozenset[str] = frozenset()
    """The client formats whose bodies the sanitizer can repair for ``provider``."""
    rejection_repair: RejectionRepairSettings = field(default_factory=RejectionRepairSettings)

    def repair_provider(self, api: str) -> str | None:
        """The provider to pass to ``sanitize`` for a body of ``api``; None: the format's own rules."""
        return self.provider if api in self.repairs_for else None

    @property
    def passes_client_key(self) -> bool:
        # Cloud providers authenticate with their own credential chains (AWS, Google), never a client key.
        return self.api_key is None and not self.model.startswith(("bedrock/", "vertex_ai/", "sagemaker/"))

    def litellm_model(self, model: str) -> str:
        # str.replace, not str.format: a model name's braces must not be read as fields.
        return self.model.replace("{model}", model)


class Router:
    """The ``routes:`` table: the first rule whose glob matches the model names the target."""

    def __init__(self, rules: list[tuple[re.Pattern[str], Target]]) -> None:
        self._rules = rules

    def __bool__(self) -> bool:
        return bool(self._rules)

    def resolve(self, model: object) -> Target | None:
        if not isinstance(model, str):
            return None
        for pattern, target in self._rules:
            if pattern.fullmatch(model):
                return target
        return None

    @property
    def targets(self) -> list[Target]:
        return list({t.name: t for _, t in self._rules}.values())


def build_router(settings: Settings, environ: Mapping[str, str] | None = None) -> Router:
    """The compiled route table; keys named by ``api_key_env`` are read here. Raises ConfigError."""
    environ = os.environ if environ is None else environ
    targets: dict[str, Target] = {name: Target(name, name, builtin=True) for name in BUILTIN_TARGETS}
    for name, cfg in settings.upstreams.items():
        key = None
        if cfg.api_key_env is not None:
            value = environ.get(cfg.api_key_env)
            if not value:
                raise ConfigError(f"upstreams.{name}.api_key_env: {cfg.api_key_env} is not set in the environment")
            problem = key_problem(value)
            if problem is not None:
                raise ConfigError(f"upstreams.{name}.api_key_env: {cfg.api_key_env} {problem}")
            key = SecretStr(value)
        targets[name] = Target(
            name=name,
            protocol=cfg.protocol,
            provider=cfg.provider,
            base_url=cfg.base_url,
            model=cfg.model,
            api_base=cfg.api_base,
            api_key=key,
            repairs_for=_repairable(cfg.provider),
            rejection_repair=cfg.rejection_repair,
        )
    # Compiled as fnmatchcase would: model names are case-sensitive at every provider.
    rules = [(re.compile(fnmatch.translate(r.match)), targets[r.upstream]) for r in settings.routes]
    return Router(rules)


def _repairable(provider: str | None) -> frozenset[str]:
    # Resolved once here, through the provider table: an Anthropic body bound for Groq through
    # litellm's adapter, say, gets Anthropic's rules until the table knows that binding.
    if provider is None:
        return frozenset()
    return frozenset(api for api in ("openai-chat", "anthropic-messages", "openai-responses") if accepts(api, provider))
