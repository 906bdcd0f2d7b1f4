"""Two small loopback servers that watch what a real agent process sends.

:class:`RecordingProxy` sits between an agent and Suture and keeps, for every request, the
exact bytes the agent sent and the status and headers Suture answered (``x-suture-repairs``),
relaying the answer as it streams. :class:`Sink` is the agent's HTTP(S) proxy for everything
that is not on loopback: it refuses each request and remembers where it was going, so a test
can show an agent configured offline really stays off the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests._support.servers import running_asyncio_server, running_server

_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
# Per-hop headers (RFC 9110 §7.6.1), and those the relay's own HTTP stack sets again.
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"})
_REQUEST_SKIP = _HOP | {"host", "content-length"}


@dataclass
class Exchange:
    """One request as the agent sent it, and the head of the answer it got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    response_headers: dict[str, str]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    def json(self) -> Any:
        return orjson.loads(self.body)


@dataclass
class RecordingProxy:
    """A reverse proxy to ``target`` recording every exchange, streams relayed as they arrive."""

    target: str
    verify: ssl.SSLContext | bool = True
    exchanges: list[Exchange] = field(default_factory=list)

    def app(self) -> Starlette:
        client: dict[str, httpx.AsyncClient] = {}

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            async with httpx.AsyncClient(timeout=httpx.Timeout(600, connect=10), verify=self.verify) as http:
                client["http"] = http
                yield

        async def relay(request: Request) -> Response:
            body = await request.body()
            headers = [(k, v) for k, v in request.headers.items() if k not in _REQUEST_SKIP]
            url = self.target + request.url.path + (f"?{request.url.query}" if request.url.query else "")
            upstream = await client["http"].send(
                client["http"].build_request(request.method, url, headers=headers, content=body), stream=True
            )
            answer = {k: v for k, v in upstream.headers.items() if k not in _HOP}
            self.exchanges.append(
                Exchange(request.method, request.url.path, dict(request.headers), body, upstream.status_code, answer)
            )

            async def stream() -> AsyncIterator[bytes]:
                try:
                    async for chunk in upstream.aiter_raw():
                        yield chunk
                finally:
                    await upstream.aclose()

            return StreamingResponse(stream(), status_code=upstream.status_code, headers=answer)

        return Starlette(routes=[Route("/{path:path}", relay, methods=_ALL_METHODS)], lifespan=lifespan)


@contextlib.contextmanager
def recording_proxy(target: str, *, verify: ssl.SSLContext | bool = True) -> Iterator[tuple[str, RecordingProxy]]:
    """A :class:`RecordingProxy` to ``target`` on a loopback port: yields its URL and itself."""
    proxy = RecordingProxy(target, verify)
    with running_server(proxy.app(), timeout_graceful_shutdown=1) as url:
        yield url, proxy


@dataclass
class Sink:
    """Where an agent's proxied traffic ends: each request refused (403), its target kept."""

    attempts: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ConnectionError):
            head = b""
        if head:
            # "CONNECT api.example.com:443 HTTP/1.1" or "GET http://host/path HTTP/1.1"
            method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
            with self.lock:
                self.attempts.append(f"{method} {rest.rsplit(' ', 1)[0]}")
        with contextlib.suppress(ConnectionError):
            writer.write(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


@contextlib.contextmanager
def sink() -> Iterator[tuple[str, Sink]]:
    """A :class:`Sink` on a loopback port: yields its URL and itself."""
    refusing = Sink()
    with running_asyncio_server(refusing.handle) as url:
        yield url, refusing
