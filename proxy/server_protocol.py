"""uvicorn's httptools protocol, with a bound on the request head and a way to drop a client.

uvicorn's httptools protocol keeps every header line a client sends, and llhttp sets no limit of
its own: one unauthenticated connection sending header lines without end grew the process by
2.2 GB in 10 s. Here a head past ``MAX_HEAD_BYTES`` (request line and headers) or
``MAX_HEADERS`` header fields is answered 431 and the connection closed, before any of Suture
runs. nginx and Node.js refuse heads of 8 to 32 KiB; LLM SDKs send about 1 KiB.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .client_watch import ABORT_SCOPE_KEY, ON_DISCONNECT_SCOPE_KEY
from .sweep import Sweep

ON_SHUTDOWN_SCOPE_KEY = "suture.on_shutdown"

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100

_log = logging.getLogger("suture.access")


class _HeadTooLarge(Exception):
    pass


class SutureHttpProtocol(HttpToolsProtocol):
    """``uvicorn.Config(http=SutureHttpProtocol)``: what ``suture serve`` runs.

    Two checks, neither run per header: the bytes of a head still incomplete after a read (so
    header lines sent without end, however many, stop at the bound), and, once a head is
    complete, its fields and their size (a read may hold a whole head beyond the bound, or a
    head and the start of a large body, of which only the head counts).
    """

    _head_open = True
    _arrived = 0
    _too_many = ""
    _on_lost: set[Callable[[], None]] | None = None
    """What to call when the connection is lost: the watches of its requests in flight."""
    _on_shutdown: set[Callable[[], None]] | None = None
    """What to call when the server shuts down: answers that never end by themselves (the page's
    event stream), which would otherwise hold the shutdown for its whole grace period."""

    _reading_since: float | None = None
    """The loop's time of the last bytes of a request not all in yet; None when none is awaited."""
    _read_timeout: float | None = None
    _sweep: Sweep | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A connection that sends nothing, or trickles its request, is held until the client is
        # done: uvicorn times out only idle keep-alive connections. Its time is the app's setting.
        timeout = _read_timeout_of(self.app)
        if timeout is not None:
            self._read_timeout = timeout
            self._reading_since = self.loop.time()
            self._sweep = Sweep.of(self.loop, timeout)
            self._sweep.add(self._check_read)

    def _check_read(self, now: float) -> None:
        since = self._reading_since
        if since is None or self._read_timeout is None:
            return
        if self.flow.read_paused:
            # Suture stopped reading (a body ahead of the app, a pipelined request): not the client's wait.
            self._reading_since = now
            return
        if now - since < self._read_timeout:
            return
        self._reading_since = None
        if self.transport.is_closing():
            return
        what = f"no bytes of the request for {self._read_timeout:g} s (timeouts.client_read)"
        if self._head_open:
            self._too_many = what
            self._refuse(408, "Request Timeout", "request_timeout")
        else:
            # The app is reading the body: it sees the client leave, as if it had.
            self.transport.close()
            _log.warning("request refused", extra={"fields": {"status": 408, "reason": what, **self._peer()}})

    def shutdown(self) -> None:
        super().shutdown()
        for callback in list(self._on_shutdown or ()):
            callback()

    def data_received(self, data: bytes) -> None:
        # Bytes of a head (a new request's first ones included) or of a body not all in yet.
        if self._read_timeout is not None and (self._head_open or self._reading_since is not None):
            self._reading_since = self.loop.time()
        if self._head_open:
            self._arrived += len(data)
        # on_headers_complete's refusal reaches uvicorn as a parser error: it calls send_400_response.
        super().data_received(data)
        if self._head_open and self._arrived > MAX_HEAD_BYTES:
            self._too_many = f"a request line and headers over {MAX_HEAD_BYTES} bytes"
            self._refuse()

    def send_400_response(self, msg: str) -> None:
        if self._too_many:
            self._refuse()
        else:
            super().send_400_response(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._sweep is not None:
            self._sweep.discard(self._check_read)
            self._sweep = None
        for callback in list(self._on_lost or ()):
            callback()

    def on_headers_complete(self) -> None:
        self._head_open = False
        headers = self.headers
        arrived, self._arrived = self._arrived, 0
        if len(headers) > MAX_HEADERS:
            self._too_many = f"more than {MAX_HEADERS} header fields"
        elif (arrived == 0 or arrived > MAX_HEAD_BYTES) and (
            len(self.url) + sum(len(name) + len(value) for name, value in headers) > MAX_HEAD_BYTES
        ):
            # Counted only when what arrived does not bound it already: a read that held a body
            # too, or a request pipelined in the read that ended the one before (not counted).
            self._too_many = f"a request line and headers over {MAX_HEAD_BYTES} bytes"
        if self._too_many:
            raise _HeadTooLarge
        if self._on_lost is None:
            self._on_lost, self._on_shutdown = set(), set()
        # The scope uvicorn made for this request as its message began; the app reads them.
        scope = self.scope
        scope[ABORT_SCOPE_KEY] = self.transport.abort  # type: ignore[literal-required]
        scope[ON_DISCONNECT_SCOPE_KEY] = self._on_lost  # type: ignore[literal-required]
        scope[ON_SHUTDOWN_SCOPE_KEY] = self._on_shutdown  # type: ignore[literal-required]
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_open = True
        self._arrived = 0
        self._reading_since = None
        # uvicorn pauses reading while more than 64 KiB of body waits for the app, and resumes
        # only when the app asks for more. A large body's last piece leaves it paused, and the
        # app asks for nothing more once the body is whole: a client that left would then go
        # unnoticed until the answer is sent, however long the upstream takes. With the request
        # complete nothing more can pile up, so reading resumes and its end is seen.
        self.flow.resume_reading()

    def _refuse(
        self,
        status: int = 431,
        reason: str = "Request Header Fields Too Large",
        kind: str = "request_header_fields_too_large",
    ) -> None:
        if self.transport.is_closing():
            return
        what = self._too_many
        message = f"Suture refused the request: {what}"
        body = orjson.dumps({"error": {"message": message, "type": kind}})
        self.transport.write(
            f"HTTP/1.1 {status} {reason}\r\n".encode()
            + b"content-type: application/json\r\nconnection: close\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        self.transport.close()
        _log.warning("request refused", extra={"fields": {"status": status, "reason": what, **self._peer()}})

    def _peer(self) -> dict[str, str | None]:
        return {"client": f"{self.client[0]}:{self.client[1]}" if self.client else None}


def _read_timeout_of(app: object) -> float | None:
    """The ``timeouts.client_read`` of the Suture app under ``app`` (uvicorn may wrap it), if any."""
    for _ in range(4):
        timeout = getattr(app, "client_read_timeout", None)
        if isinstance(timeout, float | int):
            return float(timeout)
        app = getattr(app, "app", None)
        if app is None:
            break
    return None
