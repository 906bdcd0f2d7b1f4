"""Run a real ASGI app on a real uvicorn server on a loopback port, for end-to-end tests."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import uvicorn

from proxy.cli import HTTP_PROTOCOL


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_server(app: Any, *, port: int | None = None, **config: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a background thread; yield its base URL (no trailing slash).

    With ``ssl_certfile`` and ``ssl_keyfile`` in ``config`` it serves HTTPS (an https:// URL).
    """
    port = port or free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **{"http": HTTP_PROTOCOL, **config}
        )
    )
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.01)
    try:
        yield f"{'https' if config.get('ssl_certfile') else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def wait_until_ready(base_url: str, process: subprocess.Popen[Any] | None = None, timeout: float = 15) -> None:
    """Poll ``/readyz`` until it answers 200; fail if ``process`` exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(base_url + "/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process is None or process.poll() is None, "the server exited before it was ready"
        assert time.monotonic() < deadline, f"{base_url} did not become ready within {timeout} s"
        time.sleep(0.05)


@contextlib.contextmanager
def running_asyncio_server(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]], *, port: int = 0
) -> Iterator[str]:
    """A raw asyncio server (``handle`` per connection) on 127.0.0.1, in a background thread with
    its own loop; yields its base URL and stops it on exit."""
    started = threading.Event()
    state: dict[str, Any] = {}

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
        state["url"] = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        state["loop"], state["stop"] = asyncio.get_running_loop(), asyncio.Event()
        started.set()
        async with server:
            await state["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="asyncio-server", daemon=True)
    thread.start()
    if not started.wait(10):
        raise RuntimeError("the asyncio server did not start")
    try:
        yield state["url"]
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(10)
