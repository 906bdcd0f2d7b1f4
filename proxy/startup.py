"""What ``suture serve`` says as it starts: one line of what it runs, and the mistakes it can see.

A proxy in the path of every agent call is configured once and then forgotten; the start-up line
is where an operator checks, after the fact, which file was read, which mode each provider runs
in and where its traffic goes. Keys are never part of it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import provider_table
from .config_reference import rows
from .settings import Settings, closest

# SUTURE_* names read by something other than the settings (the test suite's golden-file switch).
_NOT_SETTINGS = frozenset({"SUTURE_UPDATE_GOLDEN"})


def describe(settings: Settings, config: Path | None, version: str) -> dict[str, Any]:
    """The fields of the start-up line."""
    providers: dict[str, Any] = {}
    for provider in provider_table.providers():
        section = settings.route(provider.name)
        if not section.serves():
            providers[provider.name] = "off"
            continue
        providers[provider.name] = {
            "upstream": section.upstream,
            "mode": section.mode or settings.mode,
            "own_key": section.upstream_api_key is not None,
            "client_key": section.client_api_key is not None,
        }
    return {
        "version": version,
        "config": str(config) if config is not None else None,
        "listen": f"{settings.host}:{settings.port}",
        "providers": providers,
        "upstreams": {name: cfg.base_url or cfg.model for name, cfg in settings.upstreams.items()},
        "routes": [f"{rule.match} -> {rule.upstream}" for rule in settings.routes],
        "passthrough": settings.passthrough,
        "capture_dir": str(settings.capture.dir) if settings.capture.dir is not None else None,
        # Where to look: the page's address, and whether spans leave the process.
        "page": f"http://{settings.host}:{settings.port}{settings.ui.path}/" if settings.ui.enabled else None,
        "tracing": settings.otel.enabled,
    }


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """Each ``SUTURE_*`` variable that names no setting but is close to one (a misspelling), with
    that setting's variable. Other ``SUTURE_*`` names are the user's own (``SUTURE_BIN``): left alone."""
    environ = os.environ if environ is None else environ
    known = {env.split(" ")[0] for _, env, _, _ in rows() if env}
    found = []
    for name in sorted(environ):
        if name.startswith("SUTURE_") and name not in known and name not in _NOT_SETTINGS:
            # A nested field set on its own (SUTURE_OPENAI_RETRIES_ATTEMPTS) belongs to a JSON variable.
            close = closest(name, known, cutoff=0.75)
            if close is not None:
                found.append((name, close))
    return found


def keys_without_client_key(settings: Settings) -> list[str]:
    """The providers whose key Suture holds while their clients need none: anyone who can reach it spends it."""
    return [
        provider.name
        for provider in provider_table.providers()
        if settings.route(provider.name).serves()
        and settings.route(provider.name).upstream_api_key is not None
        and settings.route(provider.name).client_api_key is None
    ]
