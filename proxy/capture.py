"""Captures: one JSON file per request Suture repaired, the provider rejected, or strict mode refused.

A capture holds what is needed to reproduce the turn offline (``suture check|fix|replay FILE``):
the client's body, the body forwarded, the repairs, the provider's status and the first part of
its error body, the route and the request id. It holds no credential: no header but a short
allow-list, and any credential value found in the provider's error text is blanked.

Files are written off the event loop, after the response is sent, each to a temporary file in
the same directory and then renamed, so a crash never leaves half a capture. After each write
the oldest captures are removed until the directory is back under its size cap; on a full
disk, they are removed to make room and the write is tried once more.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import orjson

from sanitizer import Repair

from . import json_bytes
from .logs import log
from .redaction import Secrets

capture_log = logging.getLogger("suture.capture")

FORMAT_VERSION = 1
# Provider error bodies are a few hundred bytes; a cap keeps a misbehaving upstream from filling the disk.
MAX_ERROR_BYTES = 16 * 1024
# Writes waiting for the disk; beyond this, new captures are dropped (and logged) rather than queued.
MAX_PENDING = 64
# The upstream status of a request strict mode answered itself: it never went upstream.
STRICT_REJECTED = "strict_rejected"
_SUFFIX = ".json"
_TEMP_PREFIX = ".tmp-"
# A full disk, or a full quota: old captures can make room for the new one.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})

# Request headers that say which API version a body speaks and hold no secret; all others are
# dropped from captures (and from payloads a user hands the CLI).
SAFE_HEADERS = frozenset({"content-type", "anthropic-version", "anthropic-beta", "openai-beta"})


@dataclass
class CaptureDraft:
    """What the request path knows before the upstream answers; :meth:`finish` adds the answer."""

    request_id: str
    route: str
    path: str
    api: str
    mode: str
    original: Any
    forwarded: Any
    """The body sent upstream, or None when it was the client's own bytes."""
    repairs: list[Repair]
    headers: dict[str, str]
    secrets: tuple[str, ...] = field(default=(), repr=False)
    """Credential values of this request, only to blank them out of the error text; never stored."""
    started: float = field(default_factory=time.time)
    rejection_repairs: list[dict[str, Any]] = field(default_factory=list)
    """Each retry after a refusal: the provider's message, the strategy, its repairs, the body sent."""

    def wanted(self, status: int | str) -> bool:
        """A capture is kept for a repaired transcript and for any rejection by the provider."""
        return bool(self.repairs or self.rejection_repairs) or (isinstance(status, int) and status >= 400)

    def finish(
        self, status: int | str, error: bytes = b"", encoding: str = "", *, rejection: str | None = None
    ) -> dict[str, Any]:
        """The capture record; ``status`` is the provider's status, or why there is none.

        ``rejection`` is Suture's own error message when strict mode refused the transcript.
        """
        applied = self.forwarded is not None
        record: dict[str, Any] = {
            "suture_capture": FORMAT_VERSION,
            "request_id": self.request_id,
            "timestamp": _iso(self.started),
            "route": self.route,
            "path": self.path,
            "api": self.api,
            "mode": self.mode,
            "headers": self.headers,
            "upstream_status": status,
            "unrepaired_rejection": applied and status == 400,
            "repairs": [r.as_dict() for r in self.repairs],
            "repairs_applied": applied,
            "original": self.original,
            "forwarded": self.forwarded,
        }
        if rejection is not None:
            record["strict_rejection"] = rejection
        if self.rejection_repairs:
            # Each one is a rule Suture does not have yet: what the provider said, what fixed it.
            record["rejection_repairs"] = self.rejection_repairs
        if isinstance(status, int) and status >= 400:
            record["upstream_error"], record["upstream_error_truncated"] = _error_body(error, encoding, self.secrets)
        return record


def safe_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The request headers a capture may keep: those in the allow-list, nothing else."""
    out: dict[str, str] = {}
    for name, value in raw:
        key = name.decode("latin-1").lower()
        if key in SAFE_HEADERS:
            out[key] = value.decode("latin-1")
    return out


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"


def decoded(raw: bytes, encoding: str, limit: int) -> bytes | None:
    """An answer's first bytes (at most ``limit`` once decoded) without their ``content-encoding``
    (identity, gzip or deflate); None for another encoding, or bytes that do not decode."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding not in ("gzip", "deflate", "x-gzip"):
        return None
    # wbits 47: gzip or zlib header, detected; a truncated stream still yields its prefix.
    try:
        return zlib.decompressobj(47).decompress(raw, limit)
    except zlib.error:
        return None


def _error_body(raw: bytes, encoding: str, secrets: Iterable[str]) -> tuple[Any, bool]:
    truncated = len(raw) >= MAX_ERROR_BYTES
    plain = decoded(raw, encoding, MAX_ERROR_BYTES)
    if plain is None:
        return {"undecoded": f"{len(raw)} bytes in content-encoding {encoding.strip().lower()}"}, truncated
    text = plain[:MAX_ERROR_BYTES].decode("utf-8", errors="replace")
    # Longest first, as everywhere Suture redacts: a key holding another is blanked whole; then
    # key-shaped words, as a provider may quote a key in no registry.
    text = Secrets(secrets).redact_quoted(text)
    try:
        return orjson.loads(text), truncated
    except orjson.JSONDecodeError:
        return text, truncated


class DiskFull(Exception):
    """No room on the disk for a capture, even after evicting old ones: that capture is dropped."""


class CaptureStore:
    """The capture directory: atomic writes, oldest-first eviction, listing and lookup. Blocking I/O."""

    def __init__(self, directory: Path, max_bytes: int = 100 * 1024 * 1024) -> None:
        self.directory = directory
        self.max_bytes = max_bytes

    def write(self, record: Mapping[str, Any]) -> Path | None:
        """Write ``record`` as a new capture and evict old ones; None when it alone exceeds the cap.

        On a full disk the oldest captures are evicted to make room and the write is tried once
        more; :class:`DiskFull` when there was nothing to evict or it still did not fit.
        """
        data = json_bytes.dumps(record, indent=True, non_str_keys=True)
        if len(data) > self.max_bytes:
            return None
        # Transcripts are the users' conversations: readable by Suture's own user only.
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        stem = _stem(record)
        target = self.directory / (stem + _SUFFIX)
        n = 1
        while target.exists():
            n += 1
            target = self.directory / f"{stem}-{n}{_SUFFIX}"
        try:
            self._write_file(target, data)
        except OSError as exc:
            if exc.errno not in _DISK_FULL:
                raise
            evicted, freed = self._make_room(len(data))
            if not evicted:
                raise DiskFull("the disk is full and no older capture is left to evict") from None
            log(
                capture_log,
                logging.WARNING,
                "disk full: oldest captures evicted",
                request_id=record.get("request_id"),
                evicted=evicted,
                freed_bytes=freed,
            )
            try:
                self._write_file(target, data)
            except OSError as exc:
                if exc.errno not in _DISK_FULL:
                    raise
                raise DiskFull("the disk is still full after evicting old captures") from None
        self.evict(keep=target)
        return target

    def _write_file(self, target: Path, data: bytes) -> None:
        temp = self.directory / f"{_TEMP_PREFIX}{uuid.uuid4().hex}"
        try:
            with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()

    def _make_room(self, needed: int) -> tuple[int, int]:
        """Remove the oldest captures until ``needed`` bytes are freed: (captures removed, bytes freed).

        A removed file frees its size rounded up to whole blocks, so removing at least the new
        capture's size frees the blocks it needs.
        """
        removed = freed = 0
        for path in self.files():
            if freed >= needed:
                break
            try:
                size = path.stat().st_size
                path.unlink()
            except FileNotFoundError:
                continue
            removed += 1
            freed += size
        return removed, freed

    def files(self) -> list[Path]:
        """Capture files, oldest first (names start with the capture's UTC time)."""
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if p.suffix == _SUFFIX and not p.name.startswith("."))

    def evict(self, keep: Path | None = None) -> list[Path]:
        """Remove the oldest captures until the directory holds at most ``max_bytes``."""
        sized = []
        for path in self.files():
            with contextlib.suppress(FileNotFoundError):
                sized.append((path, path.stat().st_size))
        total = sum(size for _, size in sized)
        removed = []
        for path, size in sized:
            if total <= self.max_bytes:
                break
            if path == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            total -= size
            removed.append(path)
        return removed

    def remove_stale_temp_files(self) -> None:
        """Temporary files left by a crash mid-write; none can be in use before the proxy starts."""
        if self.directory.is_dir():
            for path in self.directory.glob(f"{_TEMP_PREFIX}*"):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def find(self, capture_id: str) -> Path:
        """The capture named ``capture_id`` (its file name, with or without ``.json``, or a unique prefix)."""
        stem = capture_id.removesuffix(_SUFFIX)
        files = self.files()
        exact = [p for p in files if p.stem == stem]
        if exact:
            return exact[0]
        matches = [p for p in files if p.stem.startswith(stem)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise LookupError(f"no capture {capture_id!r} in {self.directory}")
        raise LookupError(f"{capture_id!r} matches {len(matches)} captures in {self.directory}; give more of the id")


def _stem(record: Mapping[str, Any]) -> str:
    moment = str(record.get("timestamp", ""))
    compact = moment.replace("-", "").replace(":", "").replace(".", "")
    request_id = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(record.get("request_id", "")))[:64]
    return f"{compact}-{request_id}" if request_id else compact


class Capturer:
    """Hands finished captures to a worker thread, one write at a time, without blocking a response.

    :meth:`running` (entered by the app's lifespan) owns the task group; writes still pending
    at shutdown are finished before the lifespan ends.
    """

    def __init__(self, store: CaptureStore) -> None:
        self.store = store
        self._group: anyio.abc.TaskGroup | None = None
        self._limiter = anyio.CapacityLimiter(1)
        self._pending = 0

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        await anyio.to_thread.run_sync(self.store.remove_stale_temp_files)
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None

    def submit(self, record: dict[str, Any]) -> None:
        """Schedule ``record`` to be written; call from the event loop."""
        if self._group is None or self._pending >= MAX_PENDING:
            log(
                capture_log,
                logging.WARNING,
                "capture dropped: " + ("capture is not running" if self._group is None else "too many writes pending"),
                request_id=record.get("request_id"),
            )
            return
        self._pending += 1
        self._group.start_soon(self._write, record)

    async def _write(self, record: dict[str, Any]) -> None:
        try:
            path = await anyio.to_thread.run_sync(self.store.write, record, limiter=self._limiter)
        except DiskFull as exc:
            # This capture only: the next one may find room (eviction, or space freed meanwhile).
            log(capture_log, logging.WARNING, f"capture dropped: {exc}", request_id=record.get("request_id"))
            return
        except Exception as exc:
            log(
                capture_log,
                logging.ERROR,
                "capture not written",
                request_id=record.get("request_id"),
                error=f"{type(exc).__name__}: {exc}",
            )
            return
        finally:
            self._pending -= 1
        if path is None:
            log(
                capture_log,
                logging.WARNING,
                "capture not written: larger than capture.max_bytes",
                request_id=record.get("request_id"),
            )
        else:
            log(capture_log, logging.INFO, "capture written", request_id=record.get("request_id"), capture=path.stem)
