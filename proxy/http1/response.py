"""One answer from the upstream, parsed by httptools as its bytes arrive and read as a stream.

Its progress is one :class:`~.state.State`, moved only as the state table allows; what is not
progress stays a plain field: whether the body's end is in its framing (``_framed``), whether the
connection may carry another request (``_keep_alive``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import Protocol

import httptools

from .errors import HTTPError, ReadTimeout, RemoteProtocolError
from .framing import MAX_HEAD_BYTES, ending_error, length_is_declared, status_problem
from .state import AWAITING_HEAD, BODY, COMPLETE, FAILED, INTERIM, OVER, RELEASED, TransitionError, move

# The upstream's logger, by name: this package imports no Suture module (its records carry
# their fields as ``extra={"fields": ...}``, which Suture's formatters write out).
_log = logging.getLogger("suture.upstream")

# Past this many unread bytes of an answer, the socket is no longer read (back-pressure from
# a slow client reaches the upstream instead of filling Suture's memory).
_HIGH_WATER = 256 * 1024
# Fields RFC 9110 §6.5.1 keeps out of trailers, as only a header section can carry them: framing
# (content-length, transfer-encoding), routing (host), the content's format (content-*), and the
# trailer announcement itself. The body is framed by its chunks already: such a trailer is dropped
# with a warning, never taken for the answer's end (llhttp would refuse a content-length there).
_FORBIDDEN_TRAILERS = frozenset(
    {
        b"content-length",
        b"transfer-encoding",
        b"host",
        b"content-type",
        b"content-encoding",
        b"content-range",
        b"trailer",
    }
)


class Wire(Protocol):
    """The connection an answer arrives on, as far as the answer calls it."""

    loop: asyncio.AbstractEventLoop

    def abort(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def finished(self, response: Response, *, reusable: bool) -> None: ...


class Response:
    """One answer, read as it arrives: ``status_code`` and ``headers`` (raw pairs) once the head
    is in, then the body through :meth:`aiter_raw`. :meth:`aclose` must be called (it hands the
    connection back to the pool, or closes it when the body was not read to the end)."""

    def __init__(self, connection: Wire, read_timeout: float | None, head_request: bool = False) -> None:
        self.status_code = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self._connection = connection
        self._read_timeout = read_timeout
        self._parser = httptools.HttpResponseParser(self)
        self._state = AWAITING_HEAD
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._framed = True
        self._keep_alive = False
        self._received = 0
        self._head_bytes = 0
        self._trailer_bytes = 0
        self._forbidden: list[str] | None = None
        """Names of the trailer fields RFC 9110 forbids that the answer carried (dropped)."""
        self._since_body = 0
        self._head_request = head_request
        self._error: HTTPError | None = None
        self._waiter: asyncio.Future[None] | None = None

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
            elif self._state is COMPLETE:
                self._release()
                return
            elif self._state is FAILED:
                assert self._error is not None
                raise self._error
            elif self._state is RELEASED:
                raise RuntimeError("the answer was closed: its body can no longer be read")
            else:
                await self._wait()

    def take_whole(self) -> bytes | None:
        """The whole body, when all of it has already arrived (releasing the answer); else None
        and nothing read. A short JSON answer usually comes in the read that brought its head:
        taken at once, it needs no iteration."""
        if self._state is not COMPLETE:
            return None
        data = b"".join(self._chunks)
        self._chunks.clear()
        self._release()
        return data

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_raw()])

    async def aclose(self) -> None:
        self._release()

    def close(self) -> None:
        """As :meth:`aclose`, from synchronous code: closing never waits."""
        self._release()

    # For the tests, which watch these as the answer arrives.

    @property
    def _head_done(self) -> bool:
        return self.status_code != 0

    @property
    def _complete(self) -> bool:
        return self._state is COMPLETE

    def _release(self) -> None:
        state = self._state
        if state is not RELEASED:  # the move's check: ALLOWED has RELEASED from every other state
            reusable = state is COMPLETE and self._keep_alive
            self._state = RELEASED
            # The parser holds this object's callbacks: dropping it breaks the cycle, so the
            # answer is freed by reference counting instead of by a garbage collection.
            del self._parser
            self._connection.finished(self, reusable=reusable)

    async def _wait_for_head(self) -> None:
        # The status is set with the final head and never before: it says the head is in, even
        # once the answer has failed in its body since.
        while self.status_code == 0:
            if self._state is FAILED:
                assert self._error is not None
                raise self._error
            await self._wait()

    async def _wait(self) -> None:
        loop = self._connection.loop
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
            self._abort(ReadTimeout(f"no data from the upstream for {self._read_timeout} s"))

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, error: HTTPError) -> None:
        if self._state not in OVER:  # the first error is the one that counts
            self._error = error
            self._state = move(self._state, FAILED)
        self._wake()

    def _abort(self, error: HTTPError) -> None:
        self._fail(error)
        self._connection.abort()

    # Called by the connection.

    def _feed(self, data: bytes) -> None:
        if self._state in OVER:
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
            if isinstance(cause, TransitionError):
                raise cause from None  # a bug of ours, not a malformed answer
            if not isinstance(cause, HTTPError):
                cause = RemoteProtocolError(f"malformed answer from the upstream: {exc}")
            self._abort(cause)
            return
        state = self._state
        if state is BODY or state is COMPLETE:
            if self._since_body > MAX_HEAD_BYTES and state is BODY:
                # Trailers, or chunk framing, endlessly: httptools buffers a trailer line whole.
                self._abort(RemoteProtocolError(f"what follows the upstream's body exceeds {MAX_HEAD_BYTES} bytes"))
            elif self._buffered > _HIGH_WATER:
                self._connection.pause()
        elif self._received > MAX_HEAD_BYTES:  # still in the head (or an interim one's)
            self._abort(RemoteProtocolError(f"the upstream's response headers exceed {MAX_HEAD_BYTES} bytes"))

    def _lost(self, exc: Exception | None, clean_end: bool, request_unseen: bool) -> None:
        """The connection ended: ``clean_end`` when the upstream closed it (a TCP FIN, or TLS's
        close_notify); ``request_unseen`` when the upstream cannot have read the request."""
        state = self._state
        if state in OVER:
            return
        error = ending_error(self._received, state is BODY and not self._framed, clean_end, request_unseen, exc)
        if error is None:  # a body delimited by the end of the connection (RFC 9112 §6.3)
            self._state = move(state, COMPLETE)
            self._wake()
        else:
            self._fail(error)

    # httptools' callbacks.

    def on_message_begin(self) -> None:
        if self._state is COMPLETE:
            # A second answer in the same read as the end of this one: parsed on, it would merge
            # into this answer's status, headers and body. The error stops the parser (_feed).
            raise RemoteProtocolError("bytes past the end of the answer")

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._state is not AWAITING_HEAD:
            # A trailer (httptools reports them as headers): never merged into the head, which may
            # be relayed already and which an upstream could slip headers into so; dropped, as a
            # body relayed de-chunked has nowhere to carry them. Capped as a head is (_feed's
            # count misses those in one read with the body).
            self._trailer_bytes += len(name) + len(value) + 4
            if self._trailer_bytes > MAX_HEAD_BYTES:
                raise RemoteProtocolError(f"the upstream's trailers exceed {MAX_HEAD_BYTES} bytes")
            low = name.lower()
            if low in _FORBIDDEN_TRAILERS:
                self._forbidden = [*(self._forbidden or ()), low.decode("ascii")]
            return
        self._head_bytes += len(name) + len(value) + 4
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self._head_bytes > MAX_HEAD_BYTES:
            # A head that arrived in one read, all of it at once: _feed's count cannot see it.
            raise RemoteProtocolError(f"the upstream's response headers exceed {MAX_HEAD_BYTES} bytes")
        status = self._parser.get_status_code()
        problem = status_problem(status, self.headers)
        if problem is not None:
            raise RemoteProtocolError(problem)
        if status < 200:
            # An interim answer (103 Early Hints); the real one follows on the same connection.
            self._state = move(self._state, INTERIM)
            self.headers = []
            return
        self.status_code = status
        # The parser keeps a connection alive only past a body it can see the end of.
        self._framed = status in (204, 304) or self._parser.should_keep_alive() or length_is_declared(self.headers)
        self._since_body = 0
        # The head's framing is settled, checked strictly: what llhttp reads past it with the
        # same state machine is trailers, where a content-length must not fail the answer.
        self._parser.set_dangerous_leniencies(lenient_chunked_length=True)
        # No body answers HEAD, whatever Content-Length says (RFC 9110 §9.3.2); httptools cannot
        # be told so and would wait for one: the answer ends with its head, its connection too.
        self._state = move(self._state, COMPLETE if self._head_request else BODY)
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._since_body = 0
        self._chunks.append(body)
        self._buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        state = self._state
        if state is INTERIM:
            self._state = move(state, AWAITING_HEAD)
            return
        # Read here: the parser forgets the answer's keep-alive flag once the message is over.
        self._keep_alive = self._parser.should_keep_alive()
        if self._forbidden is not None:
            _log.warning(
                "upstream sent trailer fields RFC 9110 forbids in trailers; dropped",
                extra={"fields": {"trailers": self._forbidden}},
            )
        if state is not COMPLETE:  # the answer to HEAD was complete with its head
            self._state = move(state, COMPLETE)
        self._wake()
