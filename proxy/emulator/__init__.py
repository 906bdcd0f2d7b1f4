"""A strict fake of the OpenAI and Anthropic APIs, for Suture's tests and ``suture emulate``."""

from __future__ import annotations

from pathlib import Path

from .app import EmulatorConfig, Provider, build_emulator_app
from .extra_rules import ExtraRule

__all__ = ["EmulatorConfig", "build_emulator_app", "main_emulate"]


def main_emulate(
    provider: str,
    host: str,
    port: int,
    record: Path | None,
    stream_delay: float,
    extra_rules: tuple[ExtraRule, ...] = (),
    enforce: tuple[str, ...] = (),
) -> None:
    """Serve the emulator on ``host:port`` with uvicorn until interrupted."""
    import uvicorn

    if provider not in ("openai", "anthropic"):
        raise ValueError(f"provider must be 'openai' or 'anthropic', not {provider!r}")
    typed: Provider = "openai" if provider == "openai" else "anthropic"
    config = EmulatorConfig(
        provider=typed, record_path=record, stream_delay=stream_delay, extra_rules=extra_rules, enforce=enforce
    )
    app = build_emulator_app(config)
    uvicorn.run(app, host=host, port=port, log_level="info")
