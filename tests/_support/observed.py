"""A Suture between the official SDKs and two strict emulators, for the observability tests:
its metrics, access lines and spans after known traffic."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from proxy.app import build_app
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import Settings
from tests._support.servers import running_server

# An interrupted tool call: Suture repairs it (TP001 orphan-tool-call) before the strict emulator sees it.
BROKEN_OPENAI: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "user", "content": "Run the slow tool, please."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "tc_slow_1", "type": "function", "function": {"name": "slow_tool", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "Stop; just answer."},
    ],
    "tools": [
        {"type": "function", "function": {"name": "slow_tool", "parameters": {"type": "object", "properties": {}}}}
    ],
}
BROKEN_ANTHROPIC: dict[str, Any] = {
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "messages": [
        {"role": "user", "content": "Run the slow tool, please."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tc_slow_1", "name": "slow_tool", "input": {}}]},
        {"role": "user", "content": "Stop; just answer."},
    ],
    "tools": [{"name": "slow_tool", "input_schema": {"type": "object", "properties": {}}}],
}


@contextlib.contextmanager
def emulators(tmp_path: Path, stream_delay: float = 0.0) -> Iterator[tuple[str, str]]:
    """The OpenAI and Anthropic emulators on loopback ports: their base URLs as Suture's sections take them."""
    apps = [
        build_emulator_app(EmulatorConfig(provider=p, record_path=tmp_path / f"{p}.jsonl", stream_delay=stream_delay))  # type: ignore[arg-type]
        for p in ("openai", "anthropic")
    ]
    with (
        running_server(apps[0], timeout_graceful_shutdown=1) as oa,
        running_server(apps[1], timeout_graceful_shutdown=1) as an,
    ):
        yield oa + "/v1", an


def rejecting_app() -> Starlette:
    """An OpenAI-compatible upstream that answers every request 400: a defect no rule repairs yet."""

    async def reject(request: Request) -> Response:
        error = {"error": {"message": "messages.1: a rule nobody knows yet", "type": "invalid_request_error"}}
        return JSONResponse(error, status_code=400)

    return Starlette(routes=[Route("/{path:path}", reject, methods=["POST"])])


@dataclass
class Observed:
    url: str
    app: Starlette

    def openai(self, **kwargs: Any) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key="sk-test", max_retries=0, timeout=10, **kwargs)

    def anthropic(self, **kwargs: Any) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key="sk-ant-test", max_retries=0, timeout=10, **kwargs)


@contextlib.contextmanager
def observed(tmp_path: Path, stream_delay: float = 0.0, **settings: Any) -> Iterator[Observed]:
    """Suture in front of both emulators; ``settings`` as ``Settings`` takes them."""
    with emulators(tmp_path, stream_delay) as (oa, an):
        sections = {"openai": {"upstream": oa}, "anthropic": {"upstream": an}}
        app = build_app(Settings(**{**sections, **settings}))
        with running_server(app, timeout_graceful_shutdown=2) as url:
            yield Observed(url, app)
