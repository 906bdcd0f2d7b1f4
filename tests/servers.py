"""Run a real ASGI app on a real uvicorn server on a loopback port, for end-to-end tests."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
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
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **{"http": HTTP_PROTOCOL, **config})
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
