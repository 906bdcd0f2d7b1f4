"""Server-sent events: frame encoding, and a response that notices when the client goes away."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send


def frame(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One SSE frame: an optional ``event:`` line, one ``data:`` line, a blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class SSEResponse(Response):
    """Send pre-rendered frames, ``delay`` seconds apart, and report a client disconnect.

    Starlette's ``StreamingResponse`` learns of a disconnect only by cancelling its iterator
    (or, on ASGI 2.4 servers, from a failed ``send``; uvicorn speaks 2.3 and drops the write
    silently). Here a watcher task waits on ``receive()`` for ``http.disconnect`` and the
    sender checks it before every frame, so a cut stream is seen within one ``delay``.
    """

    media_type = "text/event-stream"

    def __init__(
        self,
        frames: Sequence[bytes],
        *,
        delay: float,
        headers: Mapping[str, str],
        on_disconnect: Callable[[int], None],
    ) -> None:
        self.frames = frames
        self.delay = delay
        self.on_disconnect = on_disconnect
        self.status_code = 200
        self.background = None
        self.init_headers({**headers, "cache-control": "no-cache"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        sent = 0
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            for frame_bytes in self.frames:
                if sent and self.delay:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(gone.wait(), self.delay)
                if gone.is_set():
                    self.on_disconnect(sent)
                    return
                await send({"type": "http.response.body", "body": frame_bytes, "more_body": True})
                sent += 1
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            # ASGI 2.4 servers raise from send() once the client is gone.
            self.on_disconnect(sent)
        except asyncio.CancelledError:
            self.on_disconnect(sent)
            raise
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
