"""The floor under Suture on its own stack: bench/run.py's "floor" target.

A bare ASGI app on the same server Suture runs on (uvicorn, httptools, uvloop, one worker) that
does only what any transcript-checking proxy must: read the body, parse it, send it upstream
through Suture's own HTTP/1.1 client (``proxy/http1``) and relay the answer. No routing, repair,
headers policy, metrics, logs or client watch. What Suture costs above this is Suture's own
logic; what this costs above nginx is the Python server stack.

    FLOOR_UPSTREAM=http://127.0.0.1:PORT uvicorn floor_app:app --http httptools --loop uvloop
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

import orjson

from proxy.http1 import ConnectionPool

_UPSTREAM = urllib.parse.urlsplit(os.environ.get("FLOOR_UPSTREAM", "http://127.0.0.1:8000"))
_pool: ConnectionPool | None = None
_HOP_BY_HOP = frozenset({b"host", b"content-length", b"connection", b"transfer-encoding", b"keep-alive"})


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global _pool
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _pool = ConnectionPool(_UPSTREAM.hostname or "127.0.0.1", _UPSTREAM.port or 80, max_connections=4096)
                await send({"type": "lifespan.startup.complete"})
            else:
                if _pool is not None:
                    await _pool.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return
    assert _pool is not None
    pieces = []
    while True:
        message = await receive()
        pieces.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(pieces)
    if body:
        orjson.loads(body)  # a transcript proxy must read the body to check it
    headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP]
    target = scope["raw_path"] + (b"?" + scope["query_string"] if scope["query_string"] else b"")
    response = await _pool.request(scope["method"].encode(), target, headers, body if body else None)
    relayed = [(k, v) for k, v in response.headers if k.lower() not in _HOP_BY_HOP]
    await send({"type": "http.response.start", "status": response.status_code, "headers": relayed})
    async for chunk in response.aiter_raw():
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
