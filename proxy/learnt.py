"""Profiles learnt from refusals: for an upstream and a model pattern, the fixes its refusals needed.

A refusal the rejection repair fixed (by the rules of a known violation, a strategy, or the
portable profile) is remembered here, so the next request to that upstream and model gets the fix
before its first attempt and the agent pays the refused round trip once. The sanitizer says what
a fix is and how to apply it (``sanitizer.rejection.Lesson``, ``apply_lessons``); this module keeps
them: in memory, in a JSON file when there is one (``learning.file``, else ``learnt/profiles.json``
in the capture directory), shared by the workers of one host and by ``suture profiles``.

The file is the truth: a process reloads it when it changed (at most once a second), so
``suture profiles forget`` reaches a running proxy, and a process writing it merges its entry into
what is there under a lock, so two workers learning at once lose nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from sanitizer.rejection import Lesson

from .logs import log, repair_log
from .settings import StatedFix

_VERSION = 1
_RELOAD_EVERY = 1.0
# A model's date or build stamp: what later snapshots of the same model change.
_STAMP = re.compile(r"(?:[-@_](?:20\d\d-?\d\d-?\d\d|\d{4,})|-latest|:latest)$")
_MAX_REFUSAL_CHARS = 300


class ProfilesFileError(Exception):
    """The profiles file cannot be read or written; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Learnt:
    """One fix an upstream's refusal needed, for the models ``models`` matches."""

    upstream: str
    """The upstream's name (a provider's section, or a route table upstream's name)."""
    base_url: str
    """Where that name pointed: a lesson of one server is not another's, whatever its name."""
    models: str
    """A model name, or a glob of the names it stands for (``claude-sonnet-4-5-*``)."""
    lesson: Lesson
    learnt_at: float
    expires_at: float
    refusal: str = ""
    """The provider's message (redacted, cut) that taught it."""

    @property
    def id(self) -> str:
        key = "\0".join((self.upstream, self.base_url, self.models, orjson.dumps(self.lesson.as_dict()).decode()))
        return hashlib.sha256(key.encode()).hexdigest()[:10]

    def matches(self, upstream: str, base_url: str, model: str) -> bool:
        return self.upstream == upstream and self.base_url == base_url and fnmatch.fnmatchcase(model, self.models)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "upstream": self.upstream,
            "base_url": self.base_url,
            "models": self.models,
            **self.lesson.as_dict(),
            "learnt_at": round(self.learnt_at, 3),
            "expires_at": round(self.expires_at, 3),
            "refusal": self.refusal,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Learnt:
        if not isinstance(data, dict):
            raise ValueError(f"an entry is an object, not {type(data).__name__}")
        upstream, base_url, models = (_string(data, k) for k in ("upstream", "base_url", "models"))
        learnt_at, expires_at = (_seconds(data, k) for k in ("learnt_at", "expires_at"))
        lesson = Lesson.from_dict({k: data[k] for k in ("fix", "codes", "keys") if k in data})
        refusal = data.get("refusal", "")
        return cls(
            upstream,
            base_url,
            models,
            lesson,
            learnt_at,
            expires_at,
            refusal if isinstance(refusal, str) else "",
        )


def _string(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"an entry's {key!r} is a non-empty string")
    return value


def _seconds(data: dict[str, Any], key: str) -> float:
    value = data.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"an entry's {key!r} is a number of seconds since the epoch")
    return float(value)


def model_pattern(model: str) -> str:
    """The models a lesson of ``model`` stands for: its later snapshots too (a trailing date,
    build number or ``latest`` becomes ``*``), else the name itself."""
    stem = _STAMP.sub("", model)
    return f"{stem}*" if stem != model and stem else model


class LearntProfiles:
    """The learnt fixes of every upstream, kept in ``path`` when there is one."""

    def __init__(self, path: Path | None, *, expire_seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.expire_seconds = expire_seconds
        self._clock = clock
        self._entries: tuple[Learnt, ...] = ()
        self._stamp: tuple[int, int] | None = None
        self._checked = float("-inf")
        self._lessons: dict[tuple[str, str, str], tuple[Lesson, ...]] = {}
        # Writers are the event loop's learning and a CLI's forget; readers never wait for them.
        self._write_lock = threading.Lock()
        if path is not None:
            self._entries = self._read()

    # ------------------------------------------------------------------ reading

    def entries(self, *, include_expired: bool = False) -> tuple[Learnt, ...]:
        self._refresh()
        now = self._clock()
        return tuple(e for e in self._entries if include_expired or e.expires_at > now)

    def lessons_for(self, upstream: str, base_url: str, model: str | None) -> tuple[Lesson, ...]:
        """What earlier refusals of ``upstream`` for ``model`` taught, oldest first: the request
        path asks this of every transcript, so it is a dict lookup once the file was read."""
        if model is None:
            return ()
        self._refresh()
        key = (upstream, base_url, model)
        found = self._lessons.get(key)
        if found is None:
            now = self._clock()
            found = tuple(
                e.lesson for e in self._entries if e.expires_at > now and e.matches(upstream, base_url, model)
            )
            if len(self._lessons) > 4096:  # a bounded cache, whatever model names clients send
                self._lessons.clear()
            self._lessons[key] = found
        return found

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < _RELOAD_EVERY:
            return
        self._checked = now
        if self.path is None:
            self._drop_expired_from_cache()
            return
        stamp = _stamp_of(self.path)
        if stamp != self._stamp:
            try:
                self._entries = self._read()
            except ProfilesFileError as exc:
                # Keep what was known: a half-edited file must not cost every request its fixes.
                log(repair_log, logging.WARNING, "learnt profiles not reloaded", reason=str(exc))
                self._stamp = stamp
                return
            self._lessons = {}
        else:
            self._drop_expired_from_cache()

    def _drop_expired_from_cache(self) -> None:
        now = self._clock()
        if any(e.expires_at <= now for e in self._entries):
            self._entries = tuple(e for e in self._entries if e.expires_at > now)
            self._lessons = {}

    def _read(self) -> tuple[Learnt, ...]:
        assert self.path is not None
        self._stamp = _stamp_of(self.path)
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return ()
        except OSError as exc:
            raise ProfilesFileError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        return _parse(raw, self.path)

    # ------------------------------------------------------------------ writing

    def learn(self, upstream: str, base_url: str, model: str, lesson: Lesson, refusal: str) -> Learnt | None:
        """Remember ``lesson`` for ``upstream`` and ``model``'s pattern; the new entry, or None when
        one like it was already known (its time then starts again)."""
        now = self._clock()
        entry = Learnt(
            upstream,
            base_url,
            model_pattern(model),
            lesson,
            now,
            now + self.expire_seconds,
            refusal[:_MAX_REFUSAL_CHARS],
        )
        known = any(e.id == entry.id and e.expires_at > now for e in self._entries)
        self._change(lambda entries: [*(e for e in entries if e.id != entry.id), entry])
        return None if known else entry

    def forget(self, chosen: Callable[[Learnt], bool]) -> list[Learnt]:
        """Forget the entries ``chosen`` picks; those forgotten."""
        gone: list[Learnt] = []

        def keep(entries: list[Learnt]) -> list[Learnt]:
            gone.extend(e for e in entries if chosen(e))
            return [e for e in entries if not chosen(e)]

        self._change(keep)
        return gone

    def _change(self, edit: Callable[[list[Learnt]], list[Learnt]]) -> None:
        with self._write_lock:
            if self.path is None:
                self._entries = tuple(edit(list(self._entries)))
            else:
                with _locked(self.path):
                    entries = edit(list(self._read()))
                    now = self._clock()
                    entries = [e for e in entries if e.expires_at > now]
                    _write(self.path, entries)
                    self._entries = tuple(entries)
                    self._stamp = _stamp_of(self.path)
            self._lessons = {}


def _parse(raw: bytes, path: Path) -> tuple[Learnt, ...]:
    if not raw.strip():
        return ()
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProfilesFileError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), list):
        raise ProfilesFileError(f'{path} is not a profiles file (an object with a "profiles" list)')
    if data.get("version") != _VERSION:
        raise ProfilesFileError(f"{path} has version {data.get('version')!r}; this Suture reads version {_VERSION}")
    entries = []
    for at, item in enumerate(data["profiles"]):
        try:
            entries.append(Learnt.from_dict(item))
        except ValueError as exc:
            raise ProfilesFileError(f"{path}: profiles[{at}]: {exc}") from None
    return tuple(entries)


def _write(path: Path, entries: Iterable[Learnt]) -> None:
    content = orjson.dumps(
        {"version": _VERSION, "profiles": [e.as_dict() for e in entries]}, option=orjson.OPT_INDENT_2
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A reader (another worker, the CLI) sees the old file or the new one, never half of one.
        fd, tmp = tempfile.mkstemp(prefix=".learnt-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(content + b"\n")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise ProfilesFileError(f"cannot write {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock beside ``path``, for the read-merge-write of one change."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_name(path.name + ".lock"), "a+b")  # noqa: SIM115 - held for the block
    except OSError as exc:
        raise ProfilesFileError(f"cannot lock {path}: {exc.strerror or exc}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stamp_of(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


STATED = "stated in the configuration"
LEARNT = "learnt from an earlier refusal of this upstream"


@dataclass(frozen=True, slots=True)
class School:
    """An upstream as lessons know it: its name, where it points, what the config states of it."""

    upstream: str
    base_url: str
    stated: tuple[StatedFix, ...] = ()
    learns: bool = True

    def lessons(self, learnt: LearntProfiles | None, model: str | None) -> tuple[tuple[Lesson, ...], str]:
        """The fixes for ``model`` and where they come from (:data:`STATED`, :data:`LEARNT`)."""
        if model is None:
            return (), LEARNT
        stated = [fix for fix in self.stated if fnmatch.fnmatchcase(model, fix.models)]
        if stated:
            return tuple(lesson for fix in stated for lesson in fix.lessons()), STATED
        if learnt is None or not self.learns:
            return (), LEARNT
        return learnt.lessons_for(self.upstream, self.base_url, model), LEARNT
