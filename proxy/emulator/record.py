"""The emulator's request log: one JSON line per request received (each ``response.create`` of a
WebSocket too), one per client disconnect, one per WebSocket the client closed.

Proxy tests read it to prove what reached the "provider": the exact bytes (by digest), the
headers (secrets redacted), the status the emulator answered, and whether a stream was cut.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Header names whose values are credentials. Their values never reach the log file.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
REDACTED = "REDACTED"


def redact_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """Lower-case header names, join repeated headers with ", ", and redact credentials."""
    headers: dict[str, str] = {}
    for name_bytes, value_bytes in raw:
        name = name_bytes.decode("latin-1").lower()
        value = REDACTED if name in SECRET_HEADERS else value_bytes.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def parse_body(raw: bytes) -> Any:
    """The body as parsed JSON, or as text when it is not JSON (so malformed input is still logged)."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")


class Recorder:
    """Appends JSON lines to ``path``; a no-op when ``path`` is None.

    Lines are small and written with one ``write`` under a lock, then flushed, so concurrent
    requests never interleave and a reader sees every finished line.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    def request(self, *, index: int, path: str, headers: dict[str, str], raw: bytes, body: Any, status: int) -> None:
        self._write(
            {
                "index": index,
                "path": path,
                "headers": headers,
                "body": body,
                "raw_sha256": hashlib.sha256(raw).hexdigest(),
                "status": status,
            }
        )

    def disconnect(self, *, index: int, path: str, frames_sent: int) -> None:
        self._write({"event": "disconnected", "path": path, "request_index": index, "frames_sent": frames_sent})

    def closed(self, *, path: str, code: int, reason: str) -> None:
        """A WebSocket the client closed: the code and reason it closed with."""
        self._write({"event": "websocket_closed", "path": path, "code": code, "reason": reason})

    def _write(self, entry: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
