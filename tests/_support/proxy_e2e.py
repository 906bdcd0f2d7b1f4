"""Helpers for the proxy's end-to-end tests: a Suture on a real port, a recording upstream, logs,
and no ambient SUTURE_* settings."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from proxy.app import build_app
from proxy.logs import JsonFormatter
from proxy.settings import Settings
from tests._support.servers import running_server


@contextlib.contextmanager
def suture(**settings: Any) -> Iterator[str]:
    """A Suture app built from ``Settings(**settings)`` on a loopback port; yields its base URL."""
    with running_server(build_app(Settings(**settings)), timeout_graceful_shutdown=2) as url:
        yield url


@dataclass
class Received:
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    def header(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]


@dataclass
class EchoUpstream:
    """A tiny upstream that records what arrives and answers 200 JSON, SSE, or slowly.

    ``sleep`` delays every answer (for timeouts); ``stream_delay`` paces SSE events, and a
    stream abandoned half-way is counted in ``disconnects``.
    """

    sleep: float = 0.0
    gzip: bool = False
    stream_delay: float = 0.0
    events: int = 5
    received: list[Received] = field(default_factory=list)
    disconnects: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def app(self) -> Starlette:
        middleware = [Middleware(GZipMiddleware, minimum_size=1)] if self.gzip else []
        return Starlette(routes=[Route("/{path:path}", self.handle, methods=["GET", "POST"])], middleware=middleware)

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        self.received.append(
            Received(
                request.method,
                request.url.path,
                request.url.query,
                [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
                body,
            )
        )
        if self.sleep:
            await asyncio.sleep(self.sleep)
        wants_stream = b'"stream":true' in body.replace(b" ", b"")
        if not wants_stream:
            return JSONResponse(
                {"ok": True, "padding": "x" * 200}, headers={"set-cookie": "upstream_session=s3cr3t; Path=/"}
            )

        async def events() -> Any:
            done = False
            try:
                for i in range(self.events):
                    yield f"data: {orjson.dumps({'i': i}).decode()}\n\n".encode()
                    await asyncio.sleep(self.stream_delay)
                yield b"data: [DONE]\n\n"
                done = True
            finally:
                if not done:
                    with self.lock:
                        self.disconnects += 1

        return StreamingResponse(events(), media_type="text/event-stream")


class LogLines(logging.Handler):
    """Collects Suture's log records (from any thread) as the JSON lines it would write."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def records(self, logger: str | None = None, event: str | None = None, **match: Any) -> list[dict[str, Any]]:
        """Parsed lines of ``logger`` with ``event``, whose fields equal ``match``."""
        out = [orjson.loads(line) for line in list(self.lines)]
        return [
            r
            for r in out
            if (logger is None or r["logger"] == logger)
            and (event is None or r["event"] == event)
            and all(r.get(k) == v for k, v in match.items())
        ]


@contextlib.contextmanager
def captured_logs() -> Iterator[LogLines]:
    """Every record of the ``suture.*`` loggers while the block runs, rendered by Suture's JSON formatter."""
    handler = LogLines()
    logger = logging.getLogger("suture")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def clear_suture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own SUTURE_* variables must not leak into the settings under test."""
    for name in list(os.environ):
        if name.startswith("SUTURE_"):
            monkeypatch.delenv(name)


def wait_for(predicate: Callable[[], Any], timeout: float = 2.0) -> Any:
    """Poll until ``predicate()`` is truthy (servers log after the last byte is sent)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.01)
