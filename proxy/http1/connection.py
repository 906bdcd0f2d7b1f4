"""One keep-alive connection to the upstream: an asyncio Protocol carrying one request at a time
and feeding its answer's bytes to the :class:`~.response.Response` it made."""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
import time
from collections.abc import AsyncIterator, Callable

from .errors import WriteTimeout
from .response import Response

# A reused connection that closes this soon after the request went out was closed by the upstream
# before the request reached it: the close crossed the request on the wire (half a round trip to
# an upstream in the same region is a millisecond or two; the rest is the event loop's own delay
# in reporting it). Later, the upstream may have read the request and started on it (a generation,
# billed): sending it again could run it twice, so the client gets the error instead.
_STALE_WINDOW = 0.010


class Connection(asyncio.Protocol):
    """``release`` is called with the connection once its request is done with it (the pool keeps
    it idle, or counts it closed); ``write_timeout`` bounds each wait on the upstream to take more
    of a request too large for the socket's buffers (None: no limit)."""

    def __init__(
        self, release: Callable[[Connection], None], write_timeout: float | None, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.loop = loop
        """The event loop the connection lives on: asked once, not on every request."""
        self._release = release
        self._write_timeout = write_timeout
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
        self._drained: asyncio.Future[None] | None = None
        self.keep = True
        """False once the connection may not carry another request (an upload cut short)."""

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
        self.resume_writing()  # wakes a body waiting to be written, which then stops
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
        if body:
            # One vectored write, and a multi-megabyte transcript is not copied onto its head.
            self.transport.writelines((head, body))
        else:
            self.transport.write(head)
        return response

    def finished(self, response: Response, *, reusable: bool) -> None:
        if response is self.response:
            self.response = None
            if not reusable or self.closed or not self.keep:
                self.abort()
            else:
                # A complete answer closed unread may have paused reading on its last bytes: an
                # idle connection left paused would never see the next answer.
                self.resume()
            self._release(self)

    # asyncio's write flow control: paused while the socket's send buffer is full.

    def pause_writing(self) -> None:
        self._write_paused = True
        timeout = self._write_timeout
        if self.response is not None and timeout is not None and self._write_timer is None:
            self._write_timer = self.loop.call_later(timeout, self._write_timed_out)

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    async def send_body(self, chunks: AsyncIterator[bytes]) -> None:
        """Write a request body of unknown length as it comes, chunked (RFC 9112 §7.1), waiting
        while the socket's buffers are full: a large upload is never held whole."""
        assert self.transport is not None
        async for chunk in chunks:
            if self.closed or self.response is None:
                return  # the upstream answered, or failed: the rest is not wanted
            if chunk:
                self.transport.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
            while self._write_paused and not self.closed:
                self._drained = self.loop.create_future()
                await self._drained
        if not self.closed:
            self.transport.write(b"0\r\n\r\n")

    def _write_timed_out(self) -> None:
        self._write_timer = None
        if self.response is not None:
            self.response._fail(WriteTimeout(f"the upstream took none of the request for {self._write_timeout} s"))
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


def _closed_with_close_notify(ssl_object: ssl.SSLObject) -> bool:
    """Whether TLS's close_notify ended the stream: asyncio reports a TCP close without one as an
    end of file too (uvloop does not report it at all)."""
    try:
        return ssl_object.read(1) == b""
    except ssl.SSLZeroReturnError:
        return True
    except ssl.SSLError:  # SSLWantReadError: the TCP connection ended, TLS's stream did not
        return False
