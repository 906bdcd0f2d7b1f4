"""Unit tests of ``proxy/http1``'s ConnectionPool against real loopback sockets.

Each upstream is a raw ``asyncio.start_server`` in the test's own event loop, writing exact bytes,
so framing, keep-alive, stale connections and back-pressure are seen as the pool sees them. Every
test runs on asyncio's loop and on uvloop's (what uvicorn runs Suture on).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import select
import socket
import ssl
import struct
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import httptools
import pytest
import trustme
import uvloop
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.http1 import (
    ConnectError,
    ConnectionPool,
    HTTPError,
    PoolTimeout,
    Proxy,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    Response,
    UntrustedCertificate,
    WriteTimeout,
)
from tests._support.servers import free_port
from tests._support.tunnel_proxy import TunnelProxy

T = TypeVar("T")
Run = Callable[[Callable[[], Coroutine[Any, Any, T]]], T]
# A safety net for a hung test, never a measure of speed.
PATIENCE = 5.0

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@pytest.fixture(params=["asyncio", "uvloop"])
def run(request: pytest.FixtureRequest) -> Run[Any]:
    factory = uvloop.new_event_loop if request.param == "uvloop" else None

    def runner(test: Callable[[], Coroutine[Any, Any, T]]) -> T:
        with asyncio.Runner(loop_factory=factory) as loop:
            return loop.run(asyncio.wait_for(test(), 4 * PATIENCE))

    return runner


async def eventually(predicate: Callable[[], object]) -> None:
    """Wait until ``predicate()`` holds; fail after PATIENCE seconds."""
    async with asyncio.timeout(PATIENCE):
        while not predicate():
            await asyncio.sleep(0.005)


class Peer:
    """One accepted connection, seen from the upstream's side."""

    def __init__(self, server: Server, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int):
        self.server = server
        self.reader = reader
        self.writer = writer
        self.number = number

    async def request(self) -> bytes | None:
        """The next request's bytes (head and Content-Length body), or None at the client's EOF."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            assert exc.partial == b"", f"a request cut short: {exc.partial!r}"
            self.server.eofs += 1
            return None
        except ConnectionResetError:
            self.server.eofs += 1
            return None
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        request = head + await self.reader.readexactly(length)
        self.server.requests.append(request)
        return request

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    def reset(self) -> None:
        """Close with a reset (RST), as a crashed upstream or a load balancer does: linger 0."""
        self.writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()

    async def until_eof(self) -> None:
        """Wait for the client to close the connection (a FIN or a reset)."""
        try:
            while await self.reader.read(65536):
                pass
        except ConnectionResetError:
            pass
        self.server.eofs += 1


Handler = Callable[[Peer], Awaitable[None]]


class Server:
    """A loopback upstream: ``handler`` runs once per accepted connection."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0  # accepted so far
        self.eofs = 0  # connections the client closed
        self.requests: list[bytes] = []
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []
        self._pools: list[ConnectionPool] = []

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # Also after a failed assertion: nothing may be left open (a transport with unsent bytes
        # would keep the loop from closing).
        for pool in self._pools:
            await pool.aclose()
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        if self._tasks:
            # Handlers end on the reset; one still waiting on the test (a failed one) is cancelled.
            _, pending = await asyncio.wait(self._tasks, timeout=PATIENCE)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending)
        await self._server.wait_closed()

    def pool(self, **options: Any) -> ConnectionPool:
        pool = ConnectionPool("127.0.0.1", self.port, **options)
        self._pools.append(pool)
        return pool

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.append(writer)
        self.connections += 1
        try:
            await self.handler(Peer(self, reader, writer, self.connections))
        except ConnectionError:
            self.eofs += 1  # the client closed the connection under a write
        except asyncio.CancelledError:
            pass
        finally:
            writer.close()
            self._tasks.discard(task)


def answering(answer: bytes) -> Handler:
    """Keep-alive: the same answer to every request, until the client closes."""

    async def handler(peer: Peer) -> None:
        while await peer.request() is not None:
            await peer.send(answer)

    return handler


def answering_in_parts(first: bytes, rest: bytes, separately: bool) -> Handler:
    """Answers every request with ``first + rest``: in one write, or in two a moment apart."""

    async def handler(peer: Peer) -> None:
        while await peer.request() is not None:
            if separately:
                await peer.send(first)
                await asyncio.sleep(0.01)
                await peer.send(rest)
            else:
                await peer.send(first + rest)

    return handler


async def get(pool: ConnectionPool, target: bytes = b"/") -> tuple[Response, bytes]:
    response = await pool.request(b"GET", target, [], None)
    try:
        return response, await response.aread()
    finally:
        await response.aclose()


async def chunks_until_error(response: Response) -> tuple[bytes, HTTPError]:
    """The body bytes that arrived, and the error that ended the body."""
    received = b""
    with pytest.raises(HTTPError) as info:
        async for chunk in response.aiter_raw():
            received += chunk
    return received, info.value


# The request as sent


def test_the_request_goes_as_built_with_host_and_content_length_only(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool()
            headers = [(b"X-Custom", b"a"), (b"authorization", b"Bearer k"), (b"X-Custom", b"b")]
            response = await pool.request(b"POST", b"/model/a%3Ab/converse?x=1", headers, b'{"a":1}')
            assert await response.aread() == b"ok"
            await response.aclose()
            await get(pool, b"/v1/models")
            await pool.aclose()
        first, second = server.requests
        assert first == (
            b"POST /model/a%3Ab/converse?x=1 HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{server.port}\r\n".encode()
            + b"X-Custom: a\r\nauthorization: Bearer k\r\nX-Custom: b\r\nContent-Length: 7\r\n\r\n"
            + b'{"a":1}'
        )
        assert second == f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()

    run(test)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        (b"x-api-key", b"k\r\nX-Injected: 1"),
        (b"x-api-key", b"k\nX-Injected: 1"),
        (b"x-api-key", b"k\0"),
        (b"x-a\r\nb", b"1"),
    ],
)
def test_a_header_with_a_line_break_or_nul_is_refused_and_nothing_is_sent(
    run: Run[None], name: bytes, value: bytes
) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match="line break or NUL"):
                await pool.request(b"GET", b"/", [(name, value)], None)
            assert (server.connections, pool.connections) == (0, 0)
            await pool.aclose()

    run(test)


def test_host_header_brackets_ipv6_and_omits_the_default_port() -> None:
    assert ConnectionPool("::1", 8080).host_header == b"[::1]:8080"
    assert ConnectionPool("::1", 80).host_header == b"[::1]"
    assert ConnectionPool("upstream.test", 80).host_header == b"upstream.test"
    assert ConnectionPool("upstream.test", 443).host_header == b"upstream.test:443"
    tls = ssl.create_default_context()
    assert ConnectionPool("upstream.test", 443, ssl_context=tls).host_header == b"upstream.test"
    assert ConnectionPool("upstream.test", 80, ssl_context=tls).host_header == b"upstream.test:80"


# Framing of the answer


def test_keep_alive_reuses_one_connection(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool()
            for _ in range(3):
                response, body = await get(pool)
                assert (response.status_code, body) == (200, b"ok")
            assert (server.connections, pool.connections) == (1, 1)
            await pool.aclose()

    run(test)


def test_a_connection_close_answer_is_not_reused(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert (response.status_code, body, response.header("CONNECTION")) == (200, b"ok", "close")
                assert pool.connections == 0
            assert server.connections == 2
            await pool.aclose()

    run(test)


def test_a_chunked_body_is_dechunked_and_the_connection_reused(run: Run[None]) -> None:
    answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"

    async def test() -> None:
        async with Server(answering(answer)) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert body == b"hello world"
                assert response.header("transfer-encoding") == "chunked"
            assert server.connections == 1
            await pool.aclose()

    run(test)


def test_a_body_without_length_is_read_to_the_end_of_the_connection(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, ")
        await asyncio.sleep(0.01)
        await peer.send(b"last part")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response, body = await get(pool)
            assert (response.status_code, body) == (200, b"first part, last part")
            assert pool.connections == 0
            await pool.aclose()

    run(test)


def test_a_body_without_length_ended_by_a_reset_is_a_read_error(run: Run[None]) -> None:
    # Only a clean close ends such a body; a reset may have cut it anywhere.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart")
        peer.reset()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert received == b"part"
            assert type(error) is ReadError
            await response.aclose()
            await pool.aclose()

    run(test)


def test_a_body_without_length_reset_while_reading_is_paused_is_a_read_error(run: Run[None]) -> None:
    # The reset comes in while back-pressure keeps the socket unread: what reading finds on
    # resuming ends the body as an error, never as its end.
    size = 8 * 1024 * 1024
    paused = asyncio.Event()

    async def handler(peer: Peer) -> None:
        await peer.request()
        peer.writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"x" * size)
        await paused.wait()
        peer.reset()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            await eventually(lambda: response._connection._paused)
            paused.set()
            await asyncio.sleep(0.05)  # the reset has arrived, unread
            received, error = await chunks_until_error(response)
            assert 0 < len(received) < size
            assert type(error) is ReadError
            await response.aclose()

    run(test)


def test_an_upstream_that_takes_no_more_of_the_request_is_a_write_timeout(run: Run[None]) -> None:
    stop = asyncio.Event()

    async def handler(peer: Peer) -> None:
        await stop.wait()  # never reads: the request's bytes pile up in the socket buffers

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(write_timeout=0.2, read_timeout=30)
            with pytest.raises(WriteTimeout):
                await pool.request(b"POST", b"/", [], b"x" * (64 * 2**20))
            assert pool.connections == 0
            stop.set()
            await pool.aclose()

    run(test)


def test_204_has_no_body_and_keeps_the_connection(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(b"HTTP/1.1 204 No Content\r\nX-Id: 1\r\n\r\n")) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert (response.status_code, body, response.header("x-id")) == (204, b"", "1")
            assert server.connections == 1
            await pool.aclose()

    run(test)


@pytest.mark.parametrize("separately", [False, True], ids=["one-write", "two-writes"])
def test_interim_answers_are_skipped_for_the_final_one(run: Run[None], separately: bool) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
    final = b"HTTP/1.1 201 Created\r\nX-Final: 1\r\nContent-Length: 4\r\n\r\ndone"

    handler = answering_in_parts(interim, final, separately)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert (response.status_code, body) == (201, b"done")
                assert response.headers == [(b"X-Final", b"1"), (b"Content-Length", b"4")]
            assert server.connections == 1
            await pool.aclose()

    run(test)


@pytest.mark.parametrize(
    "interim",
    [
        b"HTTP/1.1 150 Odd\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 199 Odd\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    ],
    ids=["content-length", "chunked"],
)
def test_an_interim_answer_declaring_a_body_is_a_protocol_error(run: Run[None], interim: bytes) -> None:
    # A 1xx ends with its head (RFC 9110 §15.2), but httptools reads the body its head declares
    # for most of them: those bytes would open the final answer's body.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(interim + OK)
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match="interim"):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0

    run(test)


def test_an_answer_to_head_has_no_body_whatever_its_content_length(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")) as server:
            pool = server.pool(read_timeout=PATIENCE)
            response = await pool.request(b"HEAD", b"/v1/models", [], None)
            assert (response.status_code, response.header("content-length")) == (200, "5")
            assert await response.aread() == b""
            await response.aclose()
            response = await pool.request(b"HEAD", b"/v1/models", [], None)
            await response.aclose()
            assert server.requests[1].startswith(b"HEAD /v1/models HTTP/1.1\r\n")

    run(test)


def test_bytes_past_the_end_of_an_answer_are_not_part_of_it(run: Run[None]) -> None:
    # A second answer to one request, in the same packet: the connection is out of step.
    second = b"HTTP/1.1 404 Not Found\r\nX-Second: 1\r\nContent-Length: 5\r\n\r\nextra"

    async def test() -> None:
        async with Server(answering(OK + second)) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert (response.status_code, response.headers, body) == (200, [(b"Content-Length", b"2")], b"ok")
            assert server.connections == 2
            await eventually(lambda: pool.connections == 0)

    run(test)


def test_a_complete_answer_closed_unread_leaves_its_connection_usable(run: Run[None]) -> None:
    # The answer's last bytes take the unread buffer past the high-water mark, which pauses
    # reading; the connection goes back to the pool complete, so it must read again.
    first, last = b"x" * (250 * 1024), b"y" * (10 * 1024)
    release = asyncio.Event()

    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (len(first) + len(last)) + first)
        await release.wait()
        await peer.send(last)
        await answering(OK)(peer)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(read_timeout=PATIENCE)
            response = await pool.request(b"GET", b"/", [], None)
            await eventually(lambda: response._buffered == len(first))
            release.set()
            await eventually(lambda: response._complete)
            assert response._connection._paused
            await response.aclose()
            _, body = await get(pool)
            assert body == b"ok"
            assert server.connections == 1

    run(test)


def test_a_body_cut_short_yields_what_arrived_then_raises(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert received == b"hello"
            assert type(error) is RemoteProtocolError
            await response.aclose()
            assert pool.connections == 0
            await pool.aclose()

    run(test)


def test_a_reset_mid_body_is_a_read_error(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")
        peer.reset()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert b"hello".startswith(received)
            assert type(error) is ReadError
            await response.aclose()
            assert pool.connections == 0

    run(test)


def test_a_chunked_body_cut_short_raises(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert (received, type(error)) == (b"hello", RemoteProtocolError)
            await response.aclose()
            await pool.aclose()

    run(test)


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
    ],
    ids=["not-http", "bad-length", "bad-header"],
)
def test_a_malformed_answer_is_a_protocol_error_and_the_connection_goes(run: Run[None], answer: bytes) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(answer)
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match="malformed"):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            await pool.aclose()

    run(test)


@pytest.mark.parametrize("writes", [1, 40], ids=["one-write", "dribbled"])
def test_headers_over_64_kib_are_a_protocol_error(run: Run[None], writes: int) -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Filler-%05d: %s\r\n" % (i, b"x" * 100) for i in range(700))
    answer = head + b"Content-Length: 2\r\n\r\nok"
    assert len(head) > 64 * 1024

    async def handler(peer: Peer) -> None:
        await peer.request()
        step = -(-len(answer) // writes)
        for start in range(0, len(answer), step):
            await peer.send(answer[start : start + step])
            if writes > 1:
                await asyncio.sleep(0.001)
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match="exceed"):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            await pool.aclose()

    run(test)


def test_headers_just_under_the_limit_are_accepted(run: Run[None]) -> None:
    head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-Filler-%05d: %s\r\n" % (i, b"x" * 100) for i in range(500))
    body = b"x" * (256 * 1024)  # arriving with the head: a big body is not a big head
    answer = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert len(head) < 64 * 1024 < len(answer)

    async def test() -> None:
        async with Server(answering(answer)) as server:
            pool = server.pool()
            response, received = await get(pool)
            assert (response.status_code, len(response.headers), received) == (200, 501, body)
            await pool.aclose()

    run(test)


@pytest.mark.parametrize("status", [b"600", b"999", b"000", b"099"])
def test_a_status_outside_100_to_599_is_a_protocol_error(run: Run[None], status: bytes) -> None:
    # httptools accepts any three digits; relayed, such a status makes the ASGI server raise.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 " + status + b" Odd\r\nContent-Length: 2\r\n\r\nok")
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match=f"malformed answer from the upstream: status {int(status)}"):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)

    run(test)


def test_a_101_switching_protocols_answer_is_a_protocol_error_not_a_loop_traceback(run: Run[None]) -> None:
    # httptools raises HttpParserUpgrade, which is no HttpParserError, from feed_data.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n\x81\x00"
        )
        await peer.until_eof()

    async def test() -> None:
        unhandled: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError, match="switched protocols"):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
        assert unhandled == []

    run(test)


@pytest.mark.parametrize("separately", [False, True], ids=["one-write", "two-writes"])
def test_trailers_are_never_merged_into_the_headers(run: Run[None], separately: bool) -> None:
    # httptools reports trailers through on_header, like the head's headers.
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    rest = b"2\r\nok\r\n0\r\nX-Injected: 1\r\nSet-Cookie: session=upstream\r\n\r\n"

    handler = answering_in_parts(head, rest, separately)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            for _ in range(2):
                response, body = await get(pool)
                assert (response.headers, body) == ([(b"Transfer-Encoding", b"chunked")], b"ok")
            assert server.connections == 1  # complete: trailers dropped, the connection kept
            await pool.aclose()

    run(test)


@pytest.mark.parametrize("flood", ["many-lines", "one-endless-line", "with-the-body"])
def test_trailers_past_64_kib_are_a_protocol_error_and_the_connection_goes(run: Run[None], flood: str) -> None:
    # An upstream streaming trailer lines forever after the last chunk grew the process to 5.5 GB.
    # More than loopback's socket buffers can hold (tcp_rmem's maximum is 32 MiB on some kernels),
    # so a sender that got it all out was read to the end.
    total = 128 * 1024 * 1024
    sent = 0

    async def handler(peer: Peer) -> None:
        nonlocal sent
        await peer.request()
        answer = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n"
        if flood == "with-the-body":
            await peer.send(answer + b"X-Flood: y\r\n" * 8000)  # 96 KB: in one or two reads
        else:
            await peer.send(answer + (b"X-Flood: " if flood == "one-endless-line" else b""))
            piece = b"y" * 16384 if flood == "one-endless-line" else b"X-Flood: y\r\n" * 1365
            while sent < total and not peer.writer.is_closing():
                await peer.send(piece)
                sent += len(piece)
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(read_timeout=1.0)
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert received == b"ok"
            assert type(error) is RemoteProtocolError
            assert f"{64 * 1024} bytes" in str(error)
            await response.aclose()
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            assert sent < total  # cut off early, not read to the end
            await pool.aclose()

    run(test)


@pytest.mark.parametrize("coding", [b"identity", b"gzip", b"chunked, identity"])
def test_a_transfer_coding_other_than_chunked_last_is_read_to_the_end_of_the_connection(
    run: Run[None], coding: bytes
) -> None:
    # RFC 9112 §6.3: a response whose final transfer coding is not chunked ends when the
    # connection closes; a clean close is its complete end, as without any framing header.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + coding + b"\r\n\r\nfirst part, ")
        await asyncio.sleep(0.01)
        await peer.send(b"last part")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response, body = await get(pool)
            assert (response.status_code, body) == (200, b"first part, last part")
            assert pool.connections == 0
            await pool.aclose()

    run(test)


def _parser_reads_to_the_close(head: bytes) -> bool:
    """Whether httptools itself waits for the end of the connection after ``head``."""

    class Events:
        complete = False

        def on_message_complete(self) -> None:
            self.complete = True

    events = Events()
    parser = httptools.HttpResponseParser(events)
    try:
        # A chunked body's end, or five bytes of body; then more than any Content-Length here.
        parser.feed_data(head + b"0\r\n\r\n" + b"x" * 20)
    except httptools.HttpParserError:
        return False
    return not events.complete


@given(
    codings=st.lists(
        st.lists(
            st.sampled_from(["chunked", "Chunked", "gzip", "identity", "", " ", "\t", "x"]), min_size=1, max_size=4
        ),
        min_size=0,
        max_size=3,
    ),
    separators=st.sampled_from([",", ", ", " ,", ",\t", ",,"]),
    length=st.sampled_from([None, b"5"]),
    closing=st.sampled_from([b"", b"Connection: close\r\n", b"Connection: keep-alive\r\n"]),
    version=st.sampled_from([b"HTTP/1.1", b"HTTP/1.0"]),
)
@settings(max_examples=300, deadline=None)
def test_the_framing_read_from_the_headers_is_the_parsers_own(
    codings: list[list[str]], separators: str, length: bytes | None, closing: bytes, version: bytes
) -> None:
    # Whether a body ends with the connection decides whether a clean close completes it: a
    # misreading either way relays a truncated body as whole or fails a whole one.
    head = version + b" 200 OK\r\n" + closing
    for field in codings:
        head += b"Transfer-Encoding: " + separators.join(field).encode() + b"\r\n"
    if length is not None:
        head += b"Content-Length: " + length + b"\r\n"
    head += b"\r\n"

    class Connection:
        def abort(self) -> None:
            pass

    response = Response(Connection(), None)  # type: ignore[arg-type]
    response._feed(head)
    if response._error is not None:
        return  # refused by the parser: no framing to agree on
    assert response._head_done
    assert (not response._framed) == _parser_reads_to_the_close(head)


# Errors and timeouts


def test_no_head_within_the_read_timeout_is_a_read_timeout_and_the_connection_goes(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(read_timeout=0.1)
            with pytest.raises(ReadTimeout):
                await pool.request(b"GET", b"/", [], None)
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)  # the upstream is told to stop
            await pool.aclose()

    run(test)


def test_a_stalled_body_is_a_read_timeout_after_the_bytes_that_arrived(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(read_timeout=0.1)
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert (received, type(error)) == (b"hello", ReadTimeout)
            await response.aclose()
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            await pool.aclose()

    run(test)


def test_a_slow_but_steady_body_is_not_a_timeout(run: Run[None]) -> None:
    # The read timeout bounds each wait for bytes, not the whole answer (a long generation).
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(15):
            await asyncio.sleep(0.03)
            await peer.send(b"1\r\nx\r\n")
        await peer.send(b"0\r\n\r\n")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(read_timeout=0.3)
            _, body = await get(pool)
            assert body == b"x" * 15

    run(test)


def test_a_refused_connection_is_a_connect_error(run: Run[None]) -> None:
    async def test() -> None:
        pool = ConnectionPool("127.0.0.1", free_port())
        with pytest.raises(ConnectError):
            await pool.request(b"GET", b"/", [], None)
        assert pool.connections == 0
        await pool.aclose()

    run(test)


# The pool


def test_a_full_pool_waits_for_a_connection_then_times_out(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        if peer.number in (1, 3):
            # The body is held back, keeping the connection busy.
            await peer.request()
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
            await peer.until_eof()
        else:
            await answering(OK)(peer)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(max_connections=1, pool_timeout=PATIENCE)
            first = await pool.request(b"GET", b"/", [], None)
            second = asyncio.create_task(get(pool))
            await asyncio.sleep(0.05)
            assert not second.done()
            await first.aclose()  # body unread: this connection goes, the waiter opens a new one
            response, _ = await asyncio.wait_for(second, PATIENCE)
            assert response.status_code == 200
            assert server.connections == 2
            await pool.aclose()

            pool = server.pool(max_connections=1, pool_timeout=0.05)
            first = await pool.request(b"GET", b"/", [], None)
            with pytest.raises(PoolTimeout):
                await pool.request(b"GET", b"/", [], None)
            await first.aclose()
            assert pool.connections == 0
            await pool.aclose()

    run(test)


def test_a_waiter_gets_the_connection_handed_back(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool(max_connections=1)
            first = await pool.request(b"GET", b"/", [], None)
            waiters = [asyncio.create_task(get(pool)) for _ in range(3)]
            await asyncio.sleep(0.01)
            assert await first.aread() == b"ok"
            await first.aclose()
            results = await asyncio.wait_for(asyncio.gather(*waiters), PATIENCE)
            assert [body for _, body in results] == [b"ok"] * 3
            assert (server.connections, pool.connections) == (1, 1)
            await pool.aclose()

    run(test)


def test_a_cancelled_request_closes_its_connection_and_frees_the_pool(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        if peer.number == 1:
            await peer.request()
            await peer.until_eof()
        else:
            await answering(OK)(peer)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(max_connections=1, pool_timeout=PATIENCE)
            task = asyncio.create_task(pool.request(b"GET", b"/", [], None))
            await eventually(lambda: server.requests)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)  # the upstream sees the client go
            _, body = await get(pool)  # the one slot is free again
            assert body == b"ok"
            await pool.aclose()

    run(test)


def test_closing_an_unread_response_closes_its_connection(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        while await peer.request() is not None:
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            await response.aclose()
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            await pool.aclose()

    run(test)


def test_a_stale_keep_alive_connection_is_retried_once_on_a_new_one(run: Run[None]) -> None:
    # The upstream's idle timeout fires as the second request arrives: read, never answered.
    async def handler(peer: Peer) -> None:
        await peer.request()
        if peer.number == 1:
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nconn1")
            await peer.request()
        else:
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nconn2")
            await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            assert (await get(pool))[1] == b"conn1"
            assert (await get(pool, b"/again"))[1] == b"conn2"
            assert server.connections == 2
            assert [r.split(b" ")[1] for r in server.requests] == [b"/", b"/again", b"/again"]
            await pool.aclose()

    run(test)


def test_a_new_connection_closed_before_an_answer_is_not_retried(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            with pytest.raises(RemoteProtocolError):
                await pool.request(b"GET", b"/", [], None)
            assert (server.connections, len(server.requests), pool.connections) == (1, 1, 0)
            await pool.aclose()

    run(test)


def test_a_stale_connection_is_retried_only_once(run: Run[None]) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        if peer.number == 1:
            await peer.send(OK)
            await peer.request()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            await get(pool)
            with pytest.raises(RemoteProtocolError):
                await pool.request(b"GET", b"/", [], None)
            assert (server.connections, len(server.requests), pool.connections) == (2, 3, 0)
            await pool.aclose()

    run(test)


def test_the_retry_after_a_stale_connection_skips_the_other_idle_ones(run: Run[None]) -> None:
    # Two idle connections, both closed by the upstream unseen (say it restarted): the retry must
    # not land on the second stale one.
    async def handler(peer: Peer) -> None:
        await peer.request()
        if peer.number <= 2:
            await peer.send(OK)
            await peer.request()
        else:
            await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
            await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool(max_connections=2)
            first, second = await asyncio.gather(
                pool.request(b"GET", b"/", [], None), pool.request(b"GET", b"/", [], None)
            )
            for response in (first, second):
                assert await response.aread() == b"ok"
                await response.aclose()
            assert pool.connections == 2
            assert (await get(pool, b"/again"))[1] == b"fresh"
            assert server.connections == 3
            await pool.aclose()

    run(test)


def test_a_reused_connection_closed_after_the_upstream_worked_on_the_request_is_not_resent(run: Run[None]) -> None:
    # The upstream read the request and worked on it (a generation, billed) before the connection
    # closed without an answer: sending it again would run the generation twice, unseen.
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(OK)
        await peer.request()
        await asyncio.sleep(0.3)

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            await get(pool)
            with pytest.raises(RemoteProtocolError, match=r"^the upstream closed the connection before answering$"):
                await pool.request(b"POST", b"/v1/chat/completions", [], b"{}")
            assert (server.connections, len(server.requests), pool.connections) == (1, 2, 0)
            await pool.aclose()

    run(test)


def test_the_retry_after_a_stale_connection_is_logged(run: Run[None], caplog: pytest.LogCaptureFixture) -> None:
    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(OK)
        if peer.number == 1:
            await peer.request()  # the idle timeout fires as the request arrives
        else:
            await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            await get(pool)
            with caplog.at_level(logging.WARNING, logger="suture.upstream"):
                assert (await get(pool))[1] == b"ok"
            assert server.connections == 2
            await pool.aclose()

    run(test)
    [record] = caplog.records
    assert record.name == "suture.upstream" and record.levelno == logging.WARNING
    assert "again on a new connection" in record.getMessage()
    fields = record.fields  # type: ignore[attr-defined]
    assert fields["upstream"].startswith("127.0.0.1:") and fields["closed_after_ms"] >= 0


def test_a_reused_connection_closed_before_the_request_was_fully_written_is_retried(run: Run[None]) -> None:
    # However long it took: the upstream never had the whole request, so it cannot have acted on it.
    body = b"x" * (16 * 1024 * 1024)

    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(OK)
        if peer.number == 1:
            await asyncio.sleep(0.3)  # reads none of the next request, then closes (a reset: unread bytes)
        else:
            await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            await get(pool)
            response = await pool.request(b"POST", b"/", [], body)
            assert await response.aread() == b"ok"
            await response.aclose()
            assert (server.connections, len(server.requests)) == (2, 2)
            assert server.requests[1].endswith(body)
            await pool.aclose()

    run(test)


def test_a_stray_answer_on_an_idle_connection_is_never_taken_for_the_next_request(run: Run[None]) -> None:
    """A broken upstream answers one request twice, the second answer late, while the connection
    sits idle in the pool. The stray answer is in the client socket's kernel buffer, not yet read
    by the event loop, when the next request takes that connection in the same loop iteration:
    it must not become that request's answer."""
    peers: list[Peer] = []

    async def handler(peer: Peer) -> None:
        peers.append(peer)
        await peer.request()
        await peer.send(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
            if peer.number == 1
            else b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh"
        )
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response, body = await get(pool)
            assert body == b"first"
            client_socket = response._connection.transport.get_extra_info("socket")  # type: ignore[union-attr]
            peers[0].writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
            # Blocks the loop until the stray bytes are in the client's buffer, read by no one.
            readable, _, _ = select.select([client_socket], [], [], PATIENCE)
            assert readable
            response, body = await get(pool)  # the pool takes the idle connection without yielding first
            assert (response.status_code, body) == (200, b"fresh")
            assert server.connections == 2
            await eventually(lambda: server.eofs == 1)  # the connection with the stray answer is closed
            await pool.aclose()

    run(test)


def test_idle_connections_past_keepalive_expiry_are_not_reused(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool(keepalive_expiry=0)
            await get(pool)
            await get(pool)
            assert (server.connections, pool.connections) == (2, 1)
            await eventually(lambda: server.eofs == 1)  # the expired one was closed
            await pool.aclose()

    run(test)


def test_pool_aclose_closes_idle_connections(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool()
            await get(pool)
            assert pool.connections == 1
            await pool.aclose()
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)
            with pytest.raises(ConnectError, match="closed"):
                await pool.request(b"GET", b"/", [], None)

    run(test)


def test_a_busy_connection_closes_when_released_after_pool_aclose(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK)) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            await pool.aclose()
            assert await response.aread() == b"ok"  # an answer under way is still read
            await response.aclose()
            assert pool.connections == 0
            await eventually(lambda: server.eofs == 1)

    run(test)


def test_an_unread_streamed_body_pauses_the_socket_and_arrives_intact(run: Run[None]) -> None:
    size = 16 * 1024 * 1024
    body = bytes(range(256)) * (size // 256)
    sent = 0

    async def handler(peer: Peer) -> None:
        nonlocal sent
        # A small send buffer, so the upstream feels the client's pause at once.
        peer.writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        for start in range(0, size, 64 * 1024):
            await peer.send(body[start : start + 64 * 1024])
            sent = start + 64 * 1024
        await peer.until_eof()

    async def test() -> None:
        async with Server(handler) as server:
            pool = server.pool()
            response = await pool.request(b"GET", b"/", [], None)
            connection = response._connection
            await eventually(lambda: connection._paused)
            # Not read, not buffered: once the socket buffers fill, the upstream's writes block
            # instead of filling Suture's memory.
            stalled = -1
            async with asyncio.timeout(PATIENCE):
                while sent != stalled:
                    stalled = sent
                    await asyncio.sleep(0.1)
            assert sent < size // 4
            assert response._buffered < 2 * 1024 * 1024
            received = bytearray()
            async for chunk in response.aiter_raw():
                received += chunk
            assert received == body
            assert sent == size
            assert not connection._paused
            await response.aclose()
            assert pool.connections == 1  # complete, so kept for the next request
            await pool.aclose()

    run(test)


# TLS, as every real provider speaks


def _tls_server_context(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    return context


def test_tls_round_trips_and_keeps_the_connection(run: Run[None]) -> None:
    ca = trustme.CA()
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)

    async def test() -> None:
        async with Server(answering(OK), tls=_tls_server_context(ca)) as server:
            pool = server.pool(ssl_context=trusted)
            assert (await get(pool))[1] == b"ok"
            assert (await get(pool))[1] == b"ok"
            assert server.connections == 1
            assert pool.host_header == f"127.0.0.1:{server.port}".encode()

    run(test)


def test_a_tls_body_without_length_cut_without_close_notify_is_an_error(run: Run[None]) -> None:
    # Only TLS's close_notify proves the upstream ended the body: a TCP close without it may be
    # anyone's (RFC 8446 §6.1; a truncation attack, or a middlebox dropping the connection).
    ca = trustme.CA()
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)

    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npart")
        await asyncio.sleep(0.01)
        peer.writer.transport.abort()  # the TCP connection closes, no close_notify sent

    async def test() -> None:
        async with Server(handler, tls=_tls_server_context(ca)) as server:
            pool = server.pool(ssl_context=trusted)
            response = await pool.request(b"GET", b"/", [], None)
            received, error = await chunks_until_error(response)
            assert received == b"part"
            assert type(error) is RemoteProtocolError
            assert "close_notify" in str(error)
            await response.aclose()

    run(test)


def test_a_tls_body_without_length_ended_with_close_notify_is_complete(run: Run[None]) -> None:
    ca = trustme.CA()
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)

    async def handler(peer: Peer) -> None:
        await peer.request()
        await peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part, ")
        await asyncio.sleep(0.01)
        await peer.send(b"last part")
        peer.writer.close()  # close_notify, then the TCP close
        await peer.writer.wait_closed()

    async def test() -> None:
        async with Server(handler, tls=_tls_server_context(ca)) as server:
            pool = server.pool(ssl_context=trusted)
            response, body = await get(pool)
            assert (response.status_code, body) == (200, b"first part, last part")
            assert pool.connections == 0

    run(test)


def test_an_untrusted_certificate_is_refused_before_anything_is_sent(run: Run[None]) -> None:
    async def test() -> None:
        async with Server(answering(OK), tls=_tls_server_context(trustme.CA())) as server:
            pool = server.pool(ssl_context=ssl.create_default_context())
            with pytest.raises(
                UntrustedCertificate,
                match=r"^TLS certificate verification failed: unable to get local issuer certificate$",
            ):
                await pool.request(b"GET", b"/", [], None)
            assert (server.requests, pool.connections) == ([], 0)

    run(test)


# Connecting


def test_a_blackholed_first_address_costs_a_quarter_second_not_the_connect_timeout() -> None:
    # A listening socket whose accept queue is full drops further SYNs: a local blackhole, as a
    # dead IPv6 route is. The host "resolves" to it first and to a live upstream second.
    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(0)
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(blackhole.getsockname())
        fillers.append(filler)

    async def test() -> None:
        async with Server(answering(OK)) as server:
            live = ("127.0.0.1", server.port)
            loop = asyncio.get_running_loop()

            async def resolve(host: str, port: int, **_: Any) -> list[Any]:
                assert (host, port) == ("upstream.test", server.port)
                tcp = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
                return [(*tcp, blackhole.getsockname()), (*tcp, live)]

            loop.getaddrinfo = resolve  # type: ignore[method-assign]
            pool = ConnectionPool("upstream.test", server.port, connect_timeout=PATIENCE)
            started = loop.time()
            response, body = await get(pool)
            assert (response.status_code, body) == (200, b"ok")
            # Raced after 0.25 s; addresses tried in turn would have waited out the timeout.
            assert loop.time() - started < PATIENCE / 2
            await pool.aclose()

    try:
        with asyncio.Runner() as runner:
            runner.run(asyncio.wait_for(test(), 4 * PATIENCE))
    finally:
        for sock in (*fillers, blackhole):
            sock.close()


# Through an HTTP proxy (a corporate egress proxy)


def test_https_goes_through_a_connect_tunnel_with_the_proxy_credentials(run: Run[None]) -> None:
    ca = trustme.CA()
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)
    credentials = b"Basic " + base64.b64encode(b"bob:s3cret word")
    tunnel = TunnelProxy(require_authorization=credentials)

    async def test() -> None:
        async with Server(answering(OK), tls=_tls_server_context(ca)) as server:
            pool = server.pool(
                ssl_context=trusted, proxy=Proxy.from_url(proxy_url.replace("//", "//bob:s3cret%20word@"))
            )
            assert (await get(pool))[1] == b"ok"
            assert (await get(pool))[1] == b"ok"
            # Inside the tunnel the upstream sees ordinary requests: no proxy credentials.
            assert len(server.requests) == 2
            for request in server.requests:
                assert b"proxy-authorization" not in request.lower() and request.startswith(b"GET / HTTP/1.1")

    with tunnel.running() as proxy_url:
        run(test)
    [connect] = tunnel.heads  # one tunnel, reused by the second request
    assert connect.startswith(b"CONNECT 127.0.0.1:")
    assert b"Proxy-Authorization: " + credentials in connect


def test_a_proxy_refusing_the_tunnel_is_a_proxy_error_that_says_why(run: Run[None]) -> None:
    tunnel = TunnelProxy(require_authorization=b"Basic c29tZW9uZTplbHNl")

    async def test() -> None:
        async with Server(answering(OK), tls=_tls_server_context(trustme.CA())) as server:
            pool = server.pool(ssl_context=ssl.create_default_context(), proxy=Proxy.from_url(proxy_url))
            with pytest.raises(ProxyError, match=r"refused the tunnel to 127\.0\.0\.1:\d+: HTTP/1.1 407 Proxy Auth"):
                await pool.request(b"GET", b"/", [], None)
            assert (server.connections, pool.connections) == (0, 0)

    with tunnel.running() as proxy_url:
        run(test)


def test_plain_http_goes_to_the_proxy_in_absolute_form(run: Run[None]) -> None:
    tunnel = TunnelProxy()

    async def test() -> None:
        pool = ConnectionPool("upstream.test", 8080, proxy=Proxy.from_url(proxy_url.replace("//", "//bob:pw@")))
        response = await pool.request(b"POST", b"/v1/chat?x=1", [(b"X-Custom", b"a")], b"{}")
        assert await response.aread() == b"answered by the proxy"
        await response.aclose()
        await pool.aclose()

    with tunnel.running() as proxy_url:
        run(test)
    [head] = tunnel.heads
    assert head.startswith(b"POST http://upstream.test:8080/v1/chat?x=1 HTTP/1.1\r\nHost: upstream.test:8080\r\n")
    assert b"X-Custom: a\r\nProxy-Authorization: Basic " + base64.b64encode(b"bob:pw") in head


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("https://proxy.corp:3128", "must be an http://host:port URL"),
        ("http://proxy.corp:3128/path", "without a path or query"),
        ("http://bob:hunter2@proxy.corp:99999", "invalid port"),
        ("proxy.corp:3128", "must be an http://host:port URL"),
    ],
)
def test_a_proxy_url_is_checked_and_its_password_never_quoted(url: str, error: str) -> None:
    with pytest.raises(ValueError, match=error) as info:
        Proxy.from_url(url)
    assert "hunter2" not in str(info.value)
    assert Proxy.from_url("http://proxy.corp") == Proxy("proxy.corp", 80)
    assert "hunter2" not in repr(Proxy.from_url("http://bob:hunter2@proxy.corp:3128"))
