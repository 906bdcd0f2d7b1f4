"""What every streamed answer does, whatever produces its bytes: watch the client, keep the outcome,
call back once when done.

Two kinds of answer stream through Suture: an upstream's raw bytes (``native.Relay``) and
litellm's events re-encoded as SSE (``via_litellm.GatewayStream``). They differ in where the bytes
come from and in how a broken upstream ends the answer; the rest is here, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from starlette.types import Receive, Scope, Send

from ..client_watch import DISCONNECTED, ClientGone, ClientWatch

Headers = list[tuple[bytes, bytes]]


class UpstreamFailure(Exception):
    """The upstream gave no answer Suture can relay as it came; ``outcome`` says why (a word, or a
    refusal's status as digits), for the metrics, the log and the retry after a refusal."""

    outcome: str = "unreachable"


@dataclass(slots=True)
class Outcome:
    """How an answer ended: ``complete``, ``client_disconnected``, ``client_stalled`` or ``upstream_error``."""

    outcome: str = "complete"
    bytes_sent: int = 0
    error: str | None = None
    head: bytes = b""
    """The first ``keep_head`` bytes sent (for captures)."""
    error_event: bool = False
    """The upstream broke, and an error event in the answer's own format said so."""


@dataclass(frozen=True)
class UpstreamBroke:
    """The upstream failed mid-answer. ``last`` is what ends the answer cleanly in its own format
    (an SSE error event); None: nothing can, and the client's connection is dropped unfinished,
    the only honest signal left once the status line is gone."""

    error: str
    last: bytes | None = None


class StreamedAnswer:
    """An ASGI response sending :meth:`chunks` as they come, under the request's :class:`ClientWatch`.

    The watch cancels the answer the moment the client disconnects or stops reading;
    :meth:`aclose` runs in every case (it is what cancels the upstream request), then ``on_done``
    gets the :class:`Outcome`.
    """

    def __init__(self, *, watch: ClientWatch, on_done: Callable[[Outcome], None] | None, keep_head: int = 0) -> None:
        self.status_code = 200
        self.headers: Headers = []
        self.watch = watch
        self.on_done = on_done
        # Callers ask for a copy of the first bytes on error answers only: small JSON, never a stream.
        self.keep_head = keep_head

    def chunks(self) -> AsyncIterator[bytes]:
        """The body, chunk by chunk. What it raises goes to :meth:`broken`."""
        raise NotImplementedError

    def whole(self) -> bytes | None:
        """The whole body, when it is already at hand (sent in one message, no iteration); else None."""
        return None

    def broken(self, error: Exception) -> UpstreamBroke | None:
        """What an error of :meth:`chunks` means for the answer; None: not the upstream's (re-raised)."""
        return None

    async def aclose(self) -> None:
        """Release the upstream side, whatever happened."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        result = Outcome()
        watch = self.watch
        # Each send is stamped (sending_since) as it starts and cleared when it is done; the
        # first stamp starts the clock that times them. Stamped here, not through a method:
        # this runs for every chunk of every answer.
        now = watch.clock
        try:
            with watch:
                watch.sending()
                await send({"type": "http.response.start", "status": self.status_code, "headers": self.headers})
                watch.sending_since = None
                whole = self.whole()
                if whole is not None:
                    result.head = whole[: self.keep_head]
                    watch.sending_since = now()
                    await send({"type": "http.response.body", "body": whole, "more_body": False})
                    watch.sending_since = None
                    result.bytes_sent = len(whole)
                    return
                chunks = self.chunks()
                while True:
                    # Only the upstream's errors are the upstream's: a failed send is the client's.
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                    except Exception as exc:
                        broke = self.broken(exc)
                        if broke is None:
                            raise
                        result.outcome, result.error = "upstream_error", broke.error
                        if broke.last is None:
                            return
                        result.error_event = True
                        watch.sending_since = now()
                        await send({"type": "http.response.body", "body": broke.last, "more_body": True})
                        watch.sending_since = None
                        break
                    if len(result.head) < self.keep_head:
                        result.head += chunk[: self.keep_head - len(result.head)]
                    watch.sending_since = now()
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    watch.sending_since = None
                    result.bytes_sent += len(chunk)
                watch.sending_since = now()
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                watch.sending_since = None
        except ClientGone as exc:
            result.outcome = exc.reason
        except OSError as exc:  # the client's socket failed under us
            result.outcome, result.error = DISCONNECTED, type(exc).__name__
        finally:
            await self.aclose()
            if self.on_done is not None:
                self.on_done(result)
