"""A small HTTP proxy on a loopback port, in its own thread, for tests of ``upstream_proxy``.

CONNECT requests are tunnelled to their target (bytes piped both ways, as a corporate egress
proxy does for HTTPS); any other request is answered by the proxy itself, so a test sees the
absolute-form request a plain-HTTP upstream gets through a proxy. Every request head is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator


class TunnelProxy:
    def __init__(self, *, require_authorization: bytes | None = None) -> None:
        self.require_authorization = require_authorization
        self.heads: list[bytes] = []
        self.port = 0
        self._tasks: set[asyncio.Task[None]] = set()

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve until the block ends; yield the proxy's URL (no credentials)."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        stop: asyncio.Event | None = None

        async def main() -> None:
            nonlocal stop
            stop = asyncio.Event()
            server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            started.set()
            async with server:
                await stop.wait()
            # Tunnels still open (a client's pooled connection) end here, inside the loop.
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
        thread.start()
        assert started.wait(10), "the test proxy did not start"
        try:
            yield f"http://127.0.0.1:{self.port}"
        finally:
            assert stop is not None
            loop.call_soon_threadsafe(stop.set)
            thread.join(10)
            loop.close()

    def _authorized(self, head: bytes) -> bool:
        if self.require_authorization is None:
            return True
        wanted = b"proxy-authorization: " + self.require_authorization
        return any(
            line.lower().startswith(b"proxy-authorization:") and line.lower() == wanted.lower()
            for line in head.split(b"\r\n")
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        self.heads.append(head)
        if not self._authorized(head):
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        method, target, _ = head.split(b" ", 2)
        if method != b"CONNECT":
            body = b"answered by the proxy"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            writer.close()
            return
        host, _, port = target.rpartition(b":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host.strip(b"[]").decode(), int(port))
        except OSError:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            writer.close()
            return
        writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()
