"""The connection pool: keep-alive connections to one origin, opened with Happy Eyeballs, directly
or through an egress proxy."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator

import aiohappyeyeballs

from .connection import Connection
from .errors import (
    ConnectError,
    ConnectTimeout,
    NameNotResolved,
    PoolTimeout,
    RemoteProtocolError,
    UntrustedCertificate,
    _StaleConnection,
)
from .framing import request_head
from .response import Response
from .tunnel import Proxy, open_tunnel

# The upstream's logger, by name: this package imports no Suture module (its records carry
# their fields as ``extra={"fields": ...}``, which Suture's formatters write out).
_log = logging.getLogger("suture.upstream")


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
        self._idle: list[Connection] = []
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
                _log.warning(
                    "sending the request again on a new connection: the reused one closed before the upstream read it",
                    extra={
                        "fields": {
                            "upstream": f"{self.host}:{self.port}",
                            "closed_after_ms": round(connection.lost_after * 1000, 3),
                        }
                    },
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

    async def stream_request(
        self, method: bytes, target: bytes, headers: list[tuple[bytes, bytes]], body: AsyncIterator[bytes]
    ) -> Response:
        """Send one request whose body is written as it comes (chunked), and return its answer once
        the head is in; raises :class:`HTTPError`, or what ``body`` raised.

        Always on a new connection: a body that cannot be sent twice must not meet a reused
        connection the upstream has just closed. An answer that comes before the whole body was
        written (an upstream refusing an upload early) ends the upload, and the connection with
        the answer.
        """
        head = self._head(method, target, [*headers, (b"Transfer-Encoding", b"chunked")], None)
        connection = await self._acquire(fresh=True)
        response = connection.send(head, None, self.read_timeout, method == b"HEAD")
        sending = asyncio.ensure_future(connection.send_body(body))
        waiting = asyncio.ensure_future(response._wait_for_head())
        try:
            await asyncio.wait((sending, waiting), return_when=asyncio.FIRST_COMPLETED)
            if sending.done() and sending.exception() is not None:
                raise sending.exception()  # type: ignore[misc]
            await waiting
        except BaseException:
            for task in (sending, waiting):
                task.cancel()
            connection.abort()
            response._release()
            raise
        if not sending.done():
            sending.cancel()
            connection.keep = False
        return response

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
        if self._proxy_headers:
            headers = [*headers, *self._proxy_headers]
        return request_head(method, self._target_prefix + target, self.host_header, headers, body)

    async def _acquire(self, *, fresh: bool = False) -> Connection:
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

    async def _connect(self) -> Connection:
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
                        await open_tunnel(sock, self.proxy, self.host, self.port)
                    _, connection = await loop.create_connection(
                        lambda: Connection(self._release, self.write_timeout, loop),
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
        except socket.gaierror as exc:
            # Its errno is getaddrinfo's (-2), which os.strerror calls "Unknown error -2".
            whose = "the proxy's host name" if self.proxy else "the host name"
            raise NameNotResolved(f"{whose} {host} could not be resolved (DNS: {exc.strerror})") from None
        except OSError as exc:  # refused, unresolvable, unreachable, TLS (ssl.SSLError is an OSError)
            raise ConnectError(str(exc) or type(exc).__name__) from None
        return connection

    def _release(self, connection: Connection) -> None:
        if connection.closed or self._closed:
            connection.abort()
            self._open -= 1
        else:
            connection.idle_since = connection.loop.time()
            self._idle.append(connection)
        self._wake_waiter()

    def _wake_waiter(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
