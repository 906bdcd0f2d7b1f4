"""The client's side of one exchange: noticing, from the moment its request is read, that it left
or that it stopped reading the answer.

A client that leaves must cancel its upstream request at once (no more tokens generated, nor
billed, and the pool slot freed), whether it leaves while the provider is still thinking or in
the middle of a stream. A client that stops reading must not pin an upstream connection for
ever: back-pressure rightly pauses the upstream read, so past ``send_timeout`` seconds without
the client taking a byte both sides are closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType

from starlette.types import Message, Receive

from .sweep import Sweep

DISCONNECTED = "client_disconnected"
STALLED = "client_stalled"
# The scope keys under which Suture's uvicorn protocol (proxy/server_protocol.py) hands over its
# transport's abort (the only way an ASGI app can drop a client that reads nothing) and a way to
# be called when the connection is lost (instead of a task per request waiting on receive()).
ABORT_SCOPE_KEY = "suture.abort"
ON_DISCONNECT_SCOPE_KEY = "suture.on_disconnect"


class ClientGone(Exception):
    """The client disconnected (``DISCONNECTED``) or stopped reading (``STALLED``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ClientWatch:
    """Watches one request's client; ``with watch:`` around work that the client's leaving cancels.

    Under Suture's own uvicorn protocol the connection's loss calls the watch (``on_disconnect``);
    under another server a task waits on ``receive()`` for the disconnect message.

    Inside the block, the client's disconnect (or a stalled send) cancels the task and the block
    raises :class:`ClientGone` instead of ``CancelledError``. Entering the block after the client
    left raises at once. :meth:`close` stops the watch (the request-context middleware calls it).
    """

    def __init__(
        self,
        receive: Receive,
        *,
        send_timeout: float | None = None,
        abort: Callable[[], None] | None = None,
        on_disconnect: set[Callable[[], None]] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.gone: str | None = None
        # Python 3.11 asks the kernel for its pid on every get_running_loop(): given when known.
        self._loop = loop or asyncio.get_running_loop()
        self.clock = self._loop.time
        """The clock :attr:`sending_since` is read on."""
        self._send_timeout = send_timeout
        self._abort = abort
        self._guarded: asyncio.Task[object] | None = None
        # The request's own task, where everything the watch guards runs (the endpoint, then its
        # answer): looked up once, not on every `with`.
        self._task: asyncio.Task[object] | None = asyncio.current_task(self._loop)
        self._cancelling = False
        self.sending_since: float | None = None
        self._sweep: Sweep | None = None
        self._closed = False
        self._watcher: asyncio.Task[None] | None = None
        self._on_disconnect = on_disconnect
        if on_disconnect is not None:
            on_disconnect.add(self._disconnected)
        else:
            # Another ASGI server: watch receive() for its disconnect message.
            self._watcher = self._loop.create_task(self._watch(receive))

    def _disconnected(self) -> None:
        if not self._closed:
            self._leave(DISCONNECTED)

    async def _watch(self, receive: Receive) -> None:
        while True:
            message: Message = await receive()
            # uvicorn also says "disconnect" once the response is complete; by then nothing is
            # guarded, so nothing is cancelled.
            if message["type"] == "http.disconnect":
                self._leave(DISCONNECTED)
                return

    def _leave(self, reason: str) -> None:
        if self.gone is None:
            self.gone = reason
        task = self._guarded
        if task is not None and not self._cancelling:
            self._cancelling = True
            task.cancel()

    def __enter__(self) -> ClientWatch:
        if self.gone is not None:
            raise ClientGone(self.gone)
        self._guarded = self._task if self._task is not None else asyncio.current_task()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        task, self._guarded = self._guarded, None
        if not self._cancelling:
            return
        self._cancelling = False
        assert task is not None
        # Ours handled: the task goes on (to clean up); anyone else's cancel still stands.
        if task.uncancel() == 0 and (exc_type is None or issubclass(exc_type, (Exception, asyncio.CancelledError))):
            raise ClientGone(self.gone or DISCONNECTED) from None

    def sending(self) -> None:
        """Called as the first send to the client starts; the next ones set ``sending_since`` to
        :attr:`clock`'s time themselves (and each back to None once done). A send still waiting on
        the client after ``send_timeout`` ends the exchange."""
        if self._sweep is None and self._send_timeout is not None and not self._closed:
            self._sweep = Sweep.of(self._loop, self._send_timeout)
            self._sweep.add(self.check_send)
        self.sending_since = self._loop.time()

    def check_send(self, now: float) -> None:
        since = self.sending_since
        if since is None or self._send_timeout is None or self.gone is not None or self._closed:
            return
        if now - since >= self._send_timeout:
            self._leave(STALLED)
            if self._abort is not None:
                self._abort()  # the client's buffered bytes go too: it was not reading them

    def close(self) -> None:
        self._closed = True
        if self._on_disconnect is not None:
            self._on_disconnect.discard(self._disconnected)
        # Dropped, not only cancelled: the cancelled task keeps its CancelledError, whose traceback
        # holds this watch; kept here too, every request's objects would form a cycle that only
        # the garbage collector frees (a third more CPU per request, measured).
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self._sweep is not None:
            self._sweep.discard(self.check_send)
