"""The page, as a Starlette app mounted under ``ui.path`` (or served alone by ``suture captures serve``).

Everything a transcript holds is the users' and their agents' text, so untrusted: templates
escape it (Jinja2's autoescape), the one script builds new rows with ``textContent``, and every
answer carries a Content-Security-Policy that allows no inline script or style at all. The key,
when set, is compared in constant time, from a header or from a cookie holding an HMAC of it
(never the key itself).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import hmac
import re
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import jinja2
import orjson
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..capture import CaptureStore
from ..learnt import Learnt, LearntProfiles
from ..server_protocol import ON_SHUTDOWN_SCOPE_KEY
from . import chart
from .ring import Counts, Entry, Ring, entry_from_capture
from .transcript import Row, TranscriptDiff, compare

HERE = Path(__file__).parent
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
COOKIE = "suture_ui"
# An event stream ends after this long and the browser reconnects (from the last row it saw): a
# stream that never ended would hold the server's graceful shutdown for its whole grace period.
STREAM_SECONDS = 20.0
KEEPALIVE_SECONDS = 10.0
_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# The login form holds one key: anything longer is refused unread (the login needs no key, so
# whoever can reach the page can send it).
LOGIN_BYTES = 4096
# How long a page waits for the requests that ended before it was asked for (their captures
# being encoded) to be listed.
SETTLE_SECONDS = 5.0
# What one request's page draws of its transcript: characters of each side's messages (their
# text, tool ids and names; markup reckoned at ROW_CHARS a message, ITEM_CHARS a tool item), and
# repairs listed. Past either, the page says so and links the capture, which holds all of it:
# a 30 MB transcript drawn whole was a page of tens of megabytes.
VIEW_CHARS = 1_000_000
ROW_CHARS = 300
ITEM_CHARS = 150
VIEW_REPAIRS = 1000


class Source(Protocol):
    """Where the page's requests come from: the live ring, or a capture directory."""

    live: bool

    def newest_first(self) -> Iterable[Entry]: ...

    def find(self, request_id: str) -> Entry | None: ...

    def counts(self) -> Counts: ...

    async def settled(self) -> None:
        """Once the requests that ended before now are listed."""


class LiveSource:
    live = True

    def __init__(self, ring: Ring) -> None:
        self.ring = ring

    def newest_first(self) -> Iterable[Entry]:
        return self.ring.newest_first()

    def find(self, request_id: str) -> Entry | None:
        return self.ring.find(request_id)

    def counts(self) -> Counts:
        return self.ring.counts

    async def settled(self) -> None:
        await self.ring.settled(SETTLE_SECONDS)


class CaptureSource:
    """A capture directory, read on each page (``suture captures serve``): read-only."""

    live = False

    def __init__(self, store: CaptureStore) -> None:
        self.store = store

    def _entries(self) -> list[Entry]:
        out = []
        for seq, path in enumerate(self.store.files(), 1):
            try:
                data = path.read_bytes()
                record = orjson.loads(data)
            except (OSError, orjson.JSONDecodeError):
                continue
            if isinstance(record, dict):
                out.append(entry_from_capture(seq, record, data))
        return out

    def newest_first(self) -> Iterable[Entry]:
        return reversed(self._entries())

    def find(self, request_id: str) -> Entry | None:
        return next((e for e in self.newest_first() if e.request_id == request_id), None)

    def counts(self) -> Counts:
        counts = Counts()
        for entry in self._entries():
            counts.add(entry)
        return counts

    async def settled(self) -> None:
        pass


def cookie_token(key: str) -> str:
    """What the cookie holds: an HMAC of the key, so the cookie jar never holds the key itself."""
    return hmac.new(key.encode(), b"suture-ui-cookie", hashlib.sha256).hexdigest()


class Guard:
    """Pure ASGI: the security headers on every answer, and the key when one is set."""

    def __init__(self, app: ASGIApp, key: str | None) -> None:
        self.app = app
        self.key = key
        self.token = cookie_token(key) if key is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        path = scope["path"][len(scope.get("root_path", "")) :] if scope.get("root_path") else scope["path"]
        if self.key is not None and not path.startswith(("/login", "/static/")) and not self._allowed(scope):
            request = Request(scope)
            if scope["method"] == "GET" and "text/html" in request.headers.get("accept", ""):
                response: Response = _render(request, "login.html", {"failed": False}, status_code=401)
            else:
                response = PlainTextResponse("the page needs its key (SUTURE_UI_API_KEY)", status_code=401)
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)

    def _allowed(self, scope: Scope) -> bool:
        assert self.key is not None and self.token is not None
        offered = b""
        cookie = ""
        for name, value in scope["headers"]:
            if name == b"authorization" and value[:7].lower() == b"bearer ":
                offered = value[7:].strip()
            elif name == b"x-suture-ui-key":
                offered = value.strip()
            elif name == b"cookie":
                cookie = value.decode("latin-1")
        if offered and hmac.compare_digest(offered, self.key.encode()):
            return True
        for part in cookie.split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE and hmac.compare_digest(value.encode(), self.token.encode()):
                return True
        return False


_templates = Jinja2Templates(
    env=jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, undefined=jinja2.StrictUndefined
    )
)


def _render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    root = request.scope.get("root_path", "") + "/"
    return _templates.TemplateResponse(
        request, name, {"root": root, **context}, status_code=status_code, headers={"cache-control": "no-store"}
    )


def _rules() -> dict[str, dict[str, str]]:
    from sanitizer.rules import RULES

    out = {}
    for rule in RULES:
        doc = rule.documentation()
        what = doc.split("What it repairs:", 1)[-1].split("\n\n", 1)[0]
        text = " ".join(what.split())
        # The paragraph under "What it repairs", whole: its sentences quote providers and agents,
        # so cutting at the first full stop would cut inside a quotation.
        summary = text if len(text) <= 300 else text[:299] + "…"
        out[rule.code] = {"code": rule.code, "name": rule.name, "summary": summary, "doc": doc}
    return out


def build_page(source: Source, *, key: str | None = None, learnt: LearntProfiles | None = None) -> ASGIApp:
    """The page's app over ``source``; ``key``, when given, is asked for. ``learnt``: the fixes
    learnt from refusals, listed on their own page (None: learning is off)."""
    rules = _rules()

    def matches(entry: Entry, filters: dict[str, str]) -> bool:
        if filters.get("repaired") and not entry.repairs:
            return False
        if filters.get("rejected") and not entry.rejected:
            return False
        if filters.get("rule") and filters["rule"] not in entry.repairs:
            return False
        return not (filters.get("route") and filters["route"] != entry.route)

    async def listing(request: Request) -> Response:
        filters = {k: request.query_params.get(k, "") for k in ("repaired", "rejected", "rule", "route")}
        await source.settled()
        entries = list(source.newest_first())
        routes = sorted({e.route for e in entries if e.route})
        shown = [e.row() for e in entries if matches(e, filters)]
        counts = source.counts()
        return _render(
            request,
            "list.html",
            {
                "rows": shown,
                "total": len(entries),
                "filters": filters,
                "rules": sorted(rules),
                "routes": routes,
                "live": source.live,
                "last_seq": max((e.seq for e in entries), default=0),
                "memory": (source.ring.bytes, source.ring.max_bytes) if isinstance(source, LiveSource) else None,
                "chart": chart.draw(counts.series()),
            },
        )

    async def events(request: Request) -> Response:
        if not isinstance(source, LiveSource):
            return PlainTextResponse("not live", status_code=404)
        ring = source.ring
        try:
            after = int(request.headers.get("last-event-id") or request.query_params.get("after") or 0)
        except ValueError:
            after = 0

        on_shutdown: set[Callable[[], None]] | None = request.scope.get(ON_SHUTDOWN_SCOPE_KEY)

        async def stream() -> AsyncIterator[bytes]:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + STREAM_SECONDS
            closing = asyncio.Event()

            def close() -> None:
                nonlocal deadline
                deadline = 0.0
                closing.set()

            if on_shutdown is not None:
                on_shutdown.add(close)
            try:
                async for chunk in rows(closing, lambda: deadline - loop.time()):
                    yield chunk
            finally:
                if on_shutdown is not None:
                    on_shutdown.discard(close)

        async def rows(closing: asyncio.Event, left: Callable[[], float]) -> AsyncIterator[bytes]:
            with ring.subscribe() as queue:
                yield b"retry: 500\n\n"
                missed = [e for e in ring.entries if e.seq > after]
                for entry in missed:
                    yield _event(entry)
                seen = missed[-1].seq if missed else after
                while (remaining := left()) > 0:
                    getting = asyncio.ensure_future(queue.get())
                    stopping = asyncio.ensure_future(closing.wait())
                    try:
                        done, _ = await asyncio.wait(
                            (getting, stopping),
                            timeout=min(remaining, KEEPALIVE_SECONDS),
                            return_when=asyncio.FIRST_COMPLETED,
                        )
                    finally:
                        getting.cancel()
                        stopping.cancel()
                    if getting not in done or getting.cancelled():
                        if not closing.is_set():
                            yield b": keep-alive\n\n"
                        continue
                    entry = getting.result()
                    if entry.seq > seen:
                        seen = entry.seq
                        yield _event(entry)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def detail(request: Request) -> Response:
        request_id = request.path_params["request_id"]
        await source.settled()
        entry = source.find(request_id) if _ID.fullmatch(request_id) else None
        if entry is None:
            return _render(request, "missing.html", {"request_id": request_id}, status_code=404)
        # Decompressing, parsing, comparing and drawing a long transcript takes seconds of CPU:
        # in a worker thread (the loop's executor, as the repair's), every other stream goes on.
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(_detail_page, request, entry, rules))

    async def download(request: Request) -> Response:
        request_id = request.path_params["request_id"]
        await source.settled()
        entry = source.find(request_id) if _ID.fullmatch(request_id) else None
        data = entry.capture_json() if entry is not None else None
        if data is None:
            return PlainTextResponse("no capture kept for this request", status_code=404)
        return Response(
            data,
            media_type="application/json",
            headers={"content-disposition": f'attachment; filename="suture-{request_id}.json"'},
        )

    async def learnt_fixes(request: Request) -> Response:
        entries = await asyncio.to_thread(learnt.entries) if learnt is not None else ()
        rows = [_profile_row(entry) for entry in entries]
        kept = str(learnt.path) if learnt is not None and learnt.path is not None else ""
        return _render(request, "profiles.html", {"rows": rows, "kept": kept, "enabled": learnt is not None})

    async def rule_reference(request: Request) -> Response:
        return _render(request, "rules.html", {"rules": list(rules.values())})

    async def login(request: Request) -> Response:
        if request.method == "GET" or key is None:
            return _render(request, "login.html", {"failed": False})
        try:
            body = await _small_body(request, LOGIN_BYTES)
        except ClientDisconnect:
            return Response(status_code=400)
        if body is None:
            # Closed, not drained: uvicorn would otherwise read (and drop) the rest of the body.
            return PlainTextResponse(
                f"the login form is larger than {LOGIN_BYTES} bytes", status_code=413, headers={"connection": "close"}
            )
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        offered = (form.get("key") or [""])[0]
        root = request.scope.get("root_path", "") + "/"
        if not hmac.compare_digest(offered.encode(), key.encode()):
            return _render(request, "login.html", {"failed": True}, status_code=401)
        response = RedirectResponse(root, status_code=303)
        response.set_cookie(COOKIE, cookie_token(key), path=root, httponly=True, samesite="strict")
        return response

    app = Starlette(
        routes=[
            Route("/", listing),
            Route("/events", events),
            Route("/rules", rule_reference),
            Route("/profiles", learnt_fixes),
            Route("/login", login, methods=["GET", "POST"]),
            Route("/requests/{request_id}", detail),
            Route("/requests/{request_id}/capture.json", download),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
    )
    return Guard(app, key)


def _profile_row(entry: Learnt) -> dict[str, Any]:
    lesson = entry.lesson
    return {
        "id": entry.id,
        "upstream": entry.upstream,
        "base_url": entry.base_url,
        "models": entry.models,
        "codes": [lesson.fix] if lesson.fix != "rules" else list(lesson.codes),
        "fix": "" if lesson.fix != "rules" else "(rules)",
        "learnt": time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry.learnt_at)),
        "expires": time.strftime("%Y-%m-%d %H:%M", time.gmtime(entry.expires_at)),
        "refusal": entry.refusal,
    }


async def _small_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None past ``limit`` bytes: refused on its Content-Length, or read no
    further than the piece that crossed ``limit``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = b""
    while True:
        message = await request.receive()
        if message["type"] != "http.request":
            raise ClientDisconnect
        chunk: bytes = message.get("body", b"")
        body += chunk
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return body


def _detail_page(request: Request, entry: Entry, rules: dict[str, dict[str, str]]) -> Response:
    """One request's page; run in a worker thread (it reads no state the loop changes)."""
    record = entry.record()
    diff: TranscriptDiff | None = None
    preview = False
    repairs: list[dict[str, Any]] = []
    cut: dict[str, int] | None = None
    if record is not None:
        repairs = [r for r in record.get("repairs") or [] if isinstance(r, dict)]
        api = str(record.get("api", ""))
        forwarded = record.get("forwarded")
        if forwarded is None and repairs:
            forwarded, preview = _would_send(record), True
        diff = compare(record.get("original"), forwarded, repairs, api)
        before, after = _drawn(diff.before), _drawn(diff.after)
        if len(before) < len(diff.before) or len(after) < len(diff.after) or len(repairs) > VIEW_REPAIRS:
            cut = {
                "before": len(before),
                "before_total": len(diff.before),
                "after": len(after),
                "after_total": len(diff.after),
                "repairs": min(len(repairs), VIEW_REPAIRS),
                "repairs_total": len(repairs),
            }
            diff = dataclasses.replace(diff, before=before, after=after)
            repairs = repairs[:VIEW_REPAIRS]
    error = None
    if record is not None and "upstream_error" in record:
        error = orjson.dumps(record["upstream_error"], option=orjson.OPT_INDENT_2).decode()
    request_id = entry.request_id
    return _render(
        request,
        "request.html",
        {
            "entry": entry.row(),
            "record": record,
            "diff": diff,
            "preview": preview,
            "cut": cut,
            "repairs": repairs,
            "rules": rules,
            "error": error,
            "strict": record.get("strict_rejection") if record is not None else None,
            "filename": f"suture-{request_id}.json",
        },
    )


def _drawn(rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """The first of ``rows`` that fit in ``VIEW_CHARS``."""
    spent = 0
    for n, row in enumerate(rows):
        spent += ROW_CHARS + len(row.text) + len(row.note)
        spent += sum(ITEM_CHARS + len(item.id) + len(item.name) for item in row.items)
        if spent > VIEW_CHARS:
            return rows[:n]
    return rows


def _event(entry: Entry) -> bytes:
    # JSON never holds a raw line break, so the row is one `data:` line.
    return b"id: %d\nevent: row\ndata: %s\n\n" % (entry.seq, orjson.dumps(entry.row()))


def _would_send(record: dict[str, Any]) -> Any:
    """What repair mode would have forwarded (a report- or strict-mode capture has no forwarded body)."""
    from sanitizer import sanitize

    try:
        return sanitize(record.get("original"), api=str(record.get("api")), provider=record.get("route")).body
    except Exception:
        return None
