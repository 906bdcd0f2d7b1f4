"""The upstream HTTP/1.1 client: a keep-alive connection pool on asyncio, parsed by httptools.

A proxy's cost is mostly its upstream client (issue 8; README, Benchmarks). Against the
benchmark's zero-delay mock, one request and its answer cost about 180 µs of CPU through
aiohttp's client and 50 µs through this one; httpx's own transport costs more than aiohttp's.
What it does is what a proxy needs and no more: one origin per pool, requests sent as built (no
headers of its own but Host and Content-Length), answers handed over as raw bytes as they arrive
(never decompressed), no redirects, cookies, proxies or retries. httptools is the C parser
uvicorn already uses for Suture's own server side.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import select
import socket
import ssl
import time
import urllib.parse
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohappyeyeballs
import httptools

from .logs import log, upstream_log

# Past this many unread bytes of an answer, the socket is no longer read (back-pressure from
# a slow client reaches the upstream instead of filling Suture's memory).
_HIGH_WATER = 256 * 1024
# An answer's status line and headers, and again what follows its body (chunk framing with no
# body bytes, trailers); more is not an LLM provider talking.
_MAX_HEAD_BYTES = 64 * 1024
# A reused connection that closes this soon after the request went out was closed by the upstream
# before the request reached it: the close crossed the request on the wire (half a round trip to
# an upstream in the same region is a millisecond or two; the rest is the event loop's own delay
# in reporting it). Later, the upstream may have read the request and started on it (a generation,
# billed): sending it again could run it twice, so the client gets the error instead.
_STALE_WINDOW = 0.010
_BAD_HEADER_BYTES = (b"\r", b"\n", b"\0")


class HTTPError(Exception):
    """The upstream gave no complete HTTP answer. The class name is what logs and errors show."""

    shown_to_client = False
    """Whether the message may go to the client too: what to fix is Suture's config, not secret."""


class TimeoutException(HTTPError):
    """No answer in time (httpx's names throughout: logs and errors show them)."""


class ConnectError(HTTPError):
    """Refused, unresolvable, unreachable, or the TLS handshake failed."""


class UntrustedCertificate(ConnectError):
    """The upstream's TLS certificate did not verify against the trusted CAs."""

    shown_to_client = True


class ProxyError(ConnectError):
    """The HTTP proxy in between refused the tunnel (407: it wants other credentials)."""

    shown_to_client = True


class ConnectTimeout(TimeoutException):
    pass


class PoolTimeout(TimeoutException):
    """Every connection stayed busy for the whole pool timeout."""


class ReadTimeout(TimeoutException):
    """No byte of the answer arrived within the read timeout."""


class WriteTimeout(TimeoutException):
    """The upstream took no more of the request's bytes within the write timeout."""


class ReadError(HTTPError):
    """The socket failed (reset) under a request."""


class RemoteProtocolError(HTTPError):
    """A malformed answer, or one cut short."""


class _StaleConnection(RemoteProtocolError):
    """A reused keep-alive connection closed before the first byte of the answer, before the
    upstream can have read the request: at once after it went out, or before all of it was written.

    The usual cause is the upstream's idle timeout firing as the request went out: it is sent once
    more on a new connection.
    """


@dataclass(frozen=True)
class Proxy:
    """An HTTP proxy between Suture and its upstreams (a corporate egress proxy): HTTPS upstreams
    are tunnelled through it with CONNECT, plain-HTTP ones are sent to it with the absolute URL."""

    host: str
    port: int
    authorization: bytes | None = field(default=None, repr=False)
    """The Proxy-Authorization value (Basic, from the URL's user and password)."""

    @classmethod
    def from_url(cls, url: str) -> Proxy:
        """``http://[user:password@]host[:port]``; raises ``ValueError`` (without the password)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("must be an http://host:port URL (an HTTP proxy; its user and password may be in it)")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("must be just http://host:port, without a path or query")
        try:
            port = parts.port or 80
        except ValueError:
            raise ValueError("has an invalid port") from None
        authorization = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            authorization = b"Basic " + base64.b64encode(f"{user}:{password}".encode())
        return cls(parts.hostname, port, authorization)


class Response:
    """One answer, read as it arrives: ``status_code`` and ``headers`` (raw pairs) once the head
    is in, then the body through :meth:`aiter_raw`. :meth:`aclose` must be called (it hands the
    connection back to the pool, or closes it when the body was not read to the end)."""

    def __init__(self, connection: _Connection, read_timeout: float | None, head_request: bool = False) -> None:
        self.status_code = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self._connection = connection
        self._read_timeout = read_timeout
        self._parser = httptools.HttpResponseParser(self)
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._head_done = False
        self._interim = False
        self._framed = True
        self._complete = False
        self._keep_alive = False
        self._received = 0
        self._head_bytes = 0
        self._trailer_bytes = 0
        self._since_body = 0
        self._head_request = head_request
        self._error: HTTPError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._released = False

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        wanted = name.lower().encode("latin-1")
        for key, value in self.headers:
            if key.lower() == wanted:
                return value.decode("latin-1")
        return None

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (de-chunked, never decompressed); raises :class:`HTTPError`."""
        while True:
            if self._chunks:
                data = self._chunks.popleft() if len(self._chunks) == 1 else b"".join(self._chunks)
                self._chunks.clear()
                self._buffered = 0
                self._connection.resume()
                yield data
            elif self._complete:
                self._release()
                return
            elif self._error is not None:
                raise self._error
            else:
                await self._wait()

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_raw()])

    async def aclose(self) -> None:
        self._release()

    def close(self) -> None:
        """As :meth:`aclose`, from synchronous code: closing never waits."""
        self._release()

    def _release(self) -> None:
        if not self._released:
            self._released = True
            reusable = self._complete and self._keep_alive
            # The parser holds this object's callbacks: dropping it breaks the cycle, so the
            # answer is freed by reference counting instead of by a garbage collection.
            del self._parser
            self._connection.finished(self, reusable=reusable)

    async def _wait_for_head(self) -> None:
        while not self._head_done:
            if self._error is not None:
                raise self._error
            await self._wait()

    async def _wait(self) -> None:
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if self._read_timeout is None else loop.call_later(self._read_timeout, self._timed_out, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def _timed_out(self, waiter: asyncio.Future[None]) -> None:
        if waiter is self._waiter:
            self._fail(ReadTimeout(f"no data from the upstream for {self._read_timeout} s"))
            self._connection.abort()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, error: HTTPError) -> None:
        if self._error is None and not self._complete:
            self._error = error
        self._wake()

    # Called by the connection.

    def _feed(self, data: bytes) -> None:
        if self._complete or self._released:
            self._connection.abort()  # bytes past the end of the answer: not a connection to reuse
            return
        self._received += len(data)
        self._since_body += len(data)
        try:
            self._parser.feed_data(data)
        except Exception as exc:
            # Not only HttpParserError: a 101 raises HttpParserUpgrade, which is none. An error
            # raised by one of the callbacks below arrives as the context of httptools' own.
            cause = exc.__context__
            if not isinstance(cause, HTTPError):
                cause = RemoteProtocolError(f"malformed answer from the upstream: {exc}")
            self._fail(cause)
            self._connection.abort()
            return
        if not self._head_done:
            if self._received > _MAX_HEAD_BYTES:
                self._fail(RemoteProtocolError(f"the upstream's response headers exceed {_MAX_HEAD_BYTES} bytes"))
                self._connection.abort()
        elif self._since_body > _MAX_HEAD_BYTES and not self._complete:
            # Trailers, or chunk framing, endlessly: httptools buffers a trailer line whole.
            self._fail(RemoteProtocolError(f"what follows the upstream's body exceeds {_MAX_HEAD_BYTES} bytes"))
            self._connection.abort()
        elif self._buffered > _HIGH_WATER:
            self._connection.pause()

    def _lost(self, exc: Exception | None, clean_end: bool, request_unseen: bool) -> None:
        """The connection ended: ``clean_end`` when the upstream closed it (a TCP FIN, or TLS's
        close_notify); ``request_unseen`` when the upstream cannot have read the request."""
        if self._complete:
            return
        if self._received == 0 and request_unseen:
            self._fail(_StaleConnection("the reused connection was closed by the upstream"))
        elif self._head_done and not self._framed and self._error is None and clean_end:
            self._complete = True  # a body delimited by the end of the connection (RFC 9112 §6.3)
            self._wake()
        elif isinstance(exc, OSError):
            self._fail(ReadError(str(exc) or type(exc).__name__))
        elif self._received == 0:
            self._fail(RemoteProtocolError("the upstream closed the connection before answering"))
        elif self._head_done and not self._framed:
            # A TCP close without TLS's close_notify may be anyone's (a truncation attack, a
            # middlebox): only close_notify says the upstream ended the body (RFC 8446 §6.1).
            self._fail(RemoteProtocolError("the connection ended without TLS close_notify: the body may be cut short"))
        else:
            self._fail(RemoteProtocolError("the upstream closed the connection before the answer was complete"))

    # httptools' callbacks.

    def on_message_begin(self) -> None:
        if self._complete:
            # A second answer in the same read as the end of this one: parsed on, it would merge
            # into this answer's status, headers and body. The error stops the parser (_feed).
            raise RemoteProtocolError("bytes past the end of the answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._head_done:
            # A trailer (httptools reports them as headers): never merged into the head, which may
            # be relayed already and which an upstream could slip headers into so; dropped, as a
            # body relayed de-chunked has nowhere to carry them. Capped as a head is (_feed's
            # count misses those in one read with the body).
            self._trailer_bytes += len(name) + len(value) + 4
            if self._trailer_bytes > _MAX_HEAD_BYTES:
                raise RemoteProtocolError(f"the upstream's trailers exceed {_MAX_HEAD_BYTES} bytes")
            return
        self._head_bytes += len(name) + len(value) + 4
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self._head_bytes > _MAX_HEAD_BYTES:
            # A head that arrived in one read, all of it at once: _feed's count cannot see it.
            raise RemoteProtocolError(f"the upstream's response headers exceed {_MAX_HEAD_BYTES} bytes")
        status = self._parser.get_status_code()
        if status == 101:
            raise RemoteProtocolError("the upstream switched protocols (101), which no request here asks for")
        if not 100 <= status <= 599:
            # httptools takes any three digits; the ASGI server refuses to send such a status.
            raise RemoteProtocolError(f"malformed answer from the upstream: status {status} is outside 100-599")
        if status < 200:
            # An interim answer (103 Early Hints); the real one follows on the same connection.
            if any(
                key.lower() == b"transfer-encoding" or (key.lower() == b"content-length" and int(value) != 0)
                for key, value in self.headers
            ):
                # A 1xx ends with its head (RFC 9110 §15.2), but httptools reads the body declared
                # by most: its bytes would open the final answer's body.
                raise RemoteProtocolError("malformed answer from the upstream: an interim (1xx) answer with a body")
            self._interim = True
            self.headers = []
            return
        self.status_code = status
        # The parser keeps a connection alive only past a body it can see the end of.
        self._framed = status in (204, 304) or self._parser.should_keep_alive() or self._length_is_declared()
        self._since_body = 0
        self._head_done = True
        if self._head_request:
            # No body answers HEAD, whatever Content-Length says (RFC 9110 §9.3.2); httptools
            # cannot be told so and would wait for one: the answer ends here, its connection too.
            self._complete = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._since_body = 0
        self._chunks.append(body)
        self._buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if self._interim:
            self._interim = False
            return
        # Read here: the parser forgets the answer's keep-alive flag once the message is over.
        self._keep_alive = self._parser.should_keep_alive()
        self._complete = True
        self._wake()

    def _length_is_declared(self) -> bool:
        """Whether the body's end is in its framing, not the connection's (RFC 9112 §6.3): a
        Content-Length, or a Transfer-Encoding whose final coding is chunked, as httptools reads it."""
        codings = []
        for key, value in self.headers:
            key = key.lower()
            if key == b"content-length":
                return True  # httptools refuses one alongside a Transfer-Encoding
            if key == b"transfer-encoding":
                codings.append(value)
        if not codings:
            return False
        final = b",".join(codings).rsplit(b",", 1)[-1]
        # httptools skips spaces and tabs before a coding, and only spaces after one.
        return final.lstrip(b" \t").rstrip(b" ").lower() == b"chunked"


def _closed_with_close_notify(ssl_object: ssl.SSLObject) -> bool:
    """Whether TLS's close_notify ended the stream: asyncio reports a TCP close without one as an
    end of file too (uvloop does not report it at all)."""
    try:
        return ssl_object.read(1) == b""
    except ssl.SSLZeroReturnError:
        return True
    except ssl.SSLError:  # SSLWantReadError: the TCP connection ended, TLS's stream did not
        return False


class _Connection(asyncio.Protocol):
    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self._waiting: select.poll | None = None  # polls the socket for unread bytes, or its end
        self.response: Response | None = None
        self.closed = False
        self.reused = False
        self.idle_since = 0.0
        self.ended_cleanly = False
        self.sent_at = 0.0
        self.lost_after = 0.0
        self._paused = False
        self._write_paused = False
        self._write_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's are not asyncio.Transport subclasses

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None:
            self.abort()  # bytes nobody asked for: the connection cannot be trusted with a request
        else:
            response._feed(data)

    def eof_received(self) -> bool | None:
        assert self.transport is not None
        ssl_object = self.transport.get_extra_info("ssl_object")
        self.ended_cleanly = ssl_object is None or _closed_with_close_notify(ssl_object)
        return None  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        unwritten = self._write_paused  # over the high-water mark of the request still unsent
        self.resume_writing()
        if self.response is not None:
            self.lost_after = time.monotonic() - self.sent_at
            unseen = self.reused and (unwritten or self.lost_after < _STALE_WINDOW)
            self.response._lost(exc, self.ended_cleanly, unseen)

    def watch(self, sock: socket.socket) -> None:
        self._waiting = select.poll()
        self._waiting.register(sock, select.POLLIN)

    def is_quiet(self) -> bool:
        """Open, with nothing waiting unread: neither the upstream's close nor bytes nobody asked
        for (a stray answer the next request would take for its own). The event loop may not have
        read them yet: asked of the socket itself, without reading (a third of a microsecond)."""
        if self.closed or self.transport is None or self.transport.is_closing() or self._waiting is None:
            return False
        return not self._waiting.poll(0)

    def send(self, head: bytes, body: bytes | None, read_timeout: float | None, head_request: bool) -> Response:
        assert self.transport is not None
        response = self.response = Response(self, read_timeout, head_request)
        self.sent_at = time.monotonic()
        if self.closed or self.transport.is_closing():
            # Closed since it went idle: nothing is written.
            response._lost(None, clean_end=False, request_unseen=self.reused)
            return response
        if body and len(body) < 65536:
            self.transport.write(head + body)
        else:
            self.transport.write(head)
            if body:
                self.transport.write(body)
        return response

    def finished(self, response: Response, *, reusable: bool) -> None:
        if response is self.response:
            self.response = None
            if not reusable or self.closed:
                self.abort()
            else:
                # A complete answer closed unread may have paused reading on its last bytes: an
                # idle connection left paused would never see the next answer.
                self.resume()
            self.pool._release(self)

    # asyncio's write flow control: paused while the socket's send buffer is full.

    def pause_writing(self) -> None:
        self._write_paused = True
        timeout = self.pool.write_timeout
        if self.response is not None and timeout is not None and self._write_timer is None:
            self._write_timer = asyncio.get_running_loop().call_later(timeout, self._write_timed_out)

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _write_timed_out(self) -> None:
        self._write_timer = None
        if self.response is not None:
            self.response._fail(WriteTimeout(f"the upstream took none of the request for {self.pool.write_timeout} s"))
        self.abort()

    def pause(self) -> None:
        if not self._paused and self.transport is not None and not self.closed:
            self._paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()

    def abort(self) -> None:
        # Not close(): a connection dropped mid-request must go at once, which is what cancels
        # the request upstream (no more tokens generated, nor billed).
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class ConnectionPool:
    """Keep-alive connections to one origin, at most ``max_connections`` open at once.

    Idle connections are reused newest first and dropped after ``keepalive_expiry`` seconds.
    Timeouts: ``connect`` for the TCP (and TLS) handshake, ``pool`` for a free connection, ``read``
    for each wait on the upstream's bytes, ``write`` for each wait on the upstream to take more of
    a request too large for the socket's buffers. None is no limit.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 100,
        connect_timeout: float | None = 10.0,
        read_timeout: float | None = 600.0,
        write_timeout: float | None = 60.0,
        pool_timeout: float | None = 10.0,
        keepalive_expiry: float = 15.0,
        proxy: Proxy | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.max_connections = max_connections
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self.pool_timeout = pool_timeout
        self.keepalive_expiry = keepalive_expiry
        default_port = 443 if ssl_context is not None else 80
        name = f"[{host}]" if ":" in host else host  # an IPv6 literal
        self.host_header = (name if port == default_port else f"{name}:{port}").encode("idna")
        self.proxy = proxy
        # Through a proxy, plain HTTP goes in absolute form (RFC 9112 §3.2.2); TLS is tunnelled.
        self._target_prefix = b"http://" + self.host_header if proxy and ssl_context is None else b""
        self._proxy_headers = (
            [(b"Proxy-Authorization", proxy.authorization)]
            if proxy and proxy.authorization and ssl_context is None
            else []
        )
        self._idle: list[_Connection] = []
        self._open = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._closed = False

    @property
    def connections(self) -> int:
        """Connections open now, idle or busy (for tests and metrics)."""
        return self._open

    @property
    def busy_connections(self) -> int:
        """Connections carrying a request now, or being opened for one."""
        return self._open - len(self._idle)

    @property
    def idle_connections(self) -> int:
        """Open connections waiting for a request (some may have been closed by the upstream since)."""
        return len(self._idle)

    async def request(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes | None
    ) -> Response:
        """Send one request and return its answer once the head is in; raises :class:`HTTPError`.

        ``target`` is the path and query exactly as they go on the wire.
        """
        head = self._head(method, target, headers, body)
        for attempt in (1, 2):
            connection = await self._acquire(fresh=attempt == 2)
            response = connection.send(head, body, self.read_timeout, method == b"HEAD")
            try:
                await response._wait_for_head()
            except _StaleConnection as exc:
                response._release()
                if attempt == 2:
                    raise RemoteProtocolError(str(exc)) from None
                log(
                    upstream_log,
                    logging.WARNING,
                    "sending the request again on a new connection: the reused one closed before the upstream read it",
                    upstream=f"{self.host}:{self.port}",
                    closed_after_ms=round(connection.lost_after * 1000, 3),
                )
                continue
            except BaseException:
                # Timed out, failed or cancelled (the client left) mid-request: the connection
                # goes, which is what tells the upstream to stop.
                connection.abort()
                response._release()
                raise
            return response
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        self._closed = True
        for connection in self._idle:
            connection.abort()
        self._open -= len(self._idle)
        self._idle.clear()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _head(self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: bytes | None) -> bytes:
        parts = [method, b" ", self._target_prefix, target, b" HTTP/1.1\r\nHost: ", self.host_header, b"\r\n"]
        if self._proxy_headers:
            headers = [*headers, *self._proxy_headers]
        for name, value in headers:
            for bad in _BAD_HEADER_BYTES:
                if bad in value or bad in name:
                    # A configured key with a line break would otherwise inject headers.
                    raise RemoteProtocolError(f"header {name[:64]!r} holds a line break or NUL: not sent")
            parts += (name, b": ", value, b"\r\n")
        if body is not None:
            parts += (b"Content-Length: ", str(len(body)).encode(), b"\r\n")
        parts.append(b"\r\n")
        return b"".join(parts)

    async def _acquire(self, *, fresh: bool = False) -> _Connection:
        """A connection for one request: an idle one, a new one, or the next one freed.

        ``fresh`` skips the idle ones (a retry after a stale one: its neighbours may be stale too).
        """
        loop = asyncio.get_running_loop()
        deadline = None
        while True:
            if self._closed:
                raise ConnectError("the connection pool is closed")
            now = loop.time()
            if fresh and self._idle and self._open >= self.max_connections:
                self._idle.pop(0).abort()  # the oldest idle connection makes room for a new one
                self._open -= 1
            while self._idle and not fresh:
                connection = self._idle.pop()
                fresh = now - connection.idle_since < self.keepalive_expiry
                if fresh and connection.is_quiet():
                    connection.reused = True
                    return connection
                connection.abort()
                self._open -= 1
            if self._open < self.max_connections:
                self._open += 1
                try:
                    return await self._connect()
                except BaseException:
                    self._open -= 1
                    self._wake_waiter()
                    raise
            if deadline is None and self.pool_timeout is not None:
                deadline = now + self.pool_timeout
            waiter = loop.create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):
                    await waiter
            except BaseException as exc:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._wake_waiter()  # woken, then timed out or cancelled: the turn passes on
                if isinstance(exc, TimeoutError):
                    raise PoolTimeout(f"all {self.max_connections} connections stayed busy") from None
                raise

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                host, port = (self.proxy.host, self.proxy.port) if self.proxy else (self.host, self.port)
                addresses = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                # Happy Eyeballs (RFC 8305): a host's addresses raced 0.25 s apart, so a dead IPv6
                # route costs a quarter second, not the whole connect timeout. uvloop's
                # create_connection tries addresses one after the other.
                sock = await aiohappyeyeballs.start_connection(addresses, happy_eyeballs_delay=0.25, interleave=1)
                try:
                    if self.proxy is not None and self.ssl_context is not None:
                        await self._tunnel(sock, self.proxy)
                    _, connection = await loop.create_connection(
                        lambda: _Connection(self),
                        sock=sock,
                        ssl=self.ssl_context,
                        server_hostname=self.host if self.ssl_context is not None else None,
                    )
                    connection.watch(sock)
                except BaseException:
                    sock.close()
                    raise
        except TimeoutError:
            raise ConnectTimeout(f"no connection within {self.connect_timeout} s") from None
        except ssl.SSLCertVerificationError as exc:
            raise UntrustedCertificate(f"TLS certificate verification failed: {exc.verify_message}") from None
        except OSError as exc:  # refused, unresolvable, unreachable, TLS (ssl.SSLError is an OSError)
            raise ConnectError(str(exc) or type(exc).__name__) from None
        return connection

    async def _tunnel(self, sock: socket.socket, proxy: Proxy) -> None:
        """CONNECT through ``proxy`` to this pool's origin; TLS then starts inside the tunnel."""
        loop = asyncio.get_running_loop()
        name = f"[{self.host}]" if ":" in self.host else self.host
        authority = f"{name}:{self.port}".encode("idna")
        request = [b"CONNECT ", authority, b" HTTP/1.1\r\nHost: ", authority, b"\r\n"]
        if proxy.authorization is not None:
            request += (b"Proxy-Authorization: ", proxy.authorization, b"\r\n")
        await loop.sock_sendall(sock, b"".join([*request, b"\r\n"]))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = await loop.sock_recv(sock, 4096)
            if not chunk:
                raise ProxyError(f"the proxy {proxy.host}:{proxy.port} closed the connection, not answering CONNECT")
            head += chunk
            if len(head) > _MAX_HEAD_BYTES:
                raise ProxyError(f"the proxy's answer to CONNECT exceeds {_MAX_HEAD_BYTES} bytes")
        status_line, _, _ = head.partition(b"\r\n")
        words = status_line.split(b" ", 2)
        if len(words) < 2 or words[1] != b"200":
            shown = status_line[:200].decode("latin-1")
            raise ProxyError(f"the proxy {proxy.host}:{proxy.port} refused the tunnel to {authority.decode()}: {shown}")
        if not head.endswith(b"\r\n\r\n"):
            raise ProxyError("the proxy sent bytes after its answer to CONNECT, before TLS")

    def _release(self, connection: _Connection) -> None:
        if connection.closed or self._closed:
            connection.abort()
            self._open -= 1
        else:
            connection.idle_since = asyncio.get_running_loop().time()
            self._idle.append(connection)
        self._wake_waiter()

    def _wake_waiter(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
