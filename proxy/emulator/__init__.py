"""A strict fake of the providers' APIs, every one on one port, for Suture's tests and ``suture emulate``."""

from __future__ import annotations

import sys
from pathlib import Path

from .app import EmulatorConfig, Provider, build_emulator_app
from .banner import banner
from .extra_rules import ExtraRule

__all__ = ["EmulatorConfig", "banner", "build_emulator_app", "main_emulate"]


def main_emulate(
    provider: str | None,
    host: str,
    port: int,
    record: Path | None,
    stream_delay: float,
    extra_rules: tuple[ExtraRule, ...] = (),
    enforce: tuple[str, ...] = (),
) -> None:
    """Print what is served where, then serve the emulator on ``host:port`` with uvicorn until
    interrupted. ``provider`` (None: every client in its own shape) is :class:`EmulatorConfig`'s."""
    import uvicorn

    if provider not in (None, "openai", "anthropic"):
        raise ValueError(f"provider must be 'openai', 'anthropic' or None, not {provider!r}")
    typed: Provider | None = None if provider is None else "openai" if provider == "openai" else "anthropic"
    config = EmulatorConfig(
        provider=typed, record_path=record, stream_delay=stream_delay, extra_rules=extra_rules, enforce=enforce
    )
    app = build_emulator_app(config)
    sys.stdout.write(banner(config, host, port))
    sys.stdout.flush()
    uvicorn.run(app, host=host, port=port, log_level="info")
