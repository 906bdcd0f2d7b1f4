"""The Responses route over a WebSocket: ``GET /v1/responses`` with ``Upgrade: websocket`` (OpenAI's
WebSocket mode, Codex CLI's default transport), relayed to the upstream's own WebSocket.

Messages pass both ways as they came, text or binary, Suture's keys masked out of the upstream's,
and each side's close code and reason reach the other. The one exception is a ``response.create``
event: it is a ``POST /v1/responses`` body with a ``type``, so it is repaired, judged (strict
mode), logged, counted, captured and shown on the page as that POST is, each event an
:class:`Exchange` of its own (method ``WEBSOCKET``), its answer the events up to
``response.completed`` (or ``failed``, ``incomplete``, ``error``). Strict mode answers a broken one
with an ``error`` event, as OpenAI answers its own refusals on the socket. The connection is an
exchange too (``GET``, 101), labelled apart (``/v1/responses (websocket)``) so that its lifetime
stays out of the requests' latencies.

A client that cannot have a WebSocket here gets its answer before the handshake: Suture's own
errors as on the POST route (401, 404, 502...), and **426 Upgrade Required** where the upstream
cannot carry one (it answered the handshake with anything but 101) or where the ``routes:``
setting may send a Responses request elsewhere (each event names its model, but the upstream is
chosen when the connection opens). 426 is the status on which Codex falls back to HTTPS at once,
instead of retrying the WebSocket (codex-rs ``stream_responses_websocket``: ``UPGRADE_REQUIRED``
gives ``FallbackToHttp``).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import Response
from starlette.types import Scope
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import EXTERNAL_CLOSE_CODES

from sanitizer import Repair, SanitizeResult, looks_clean
from sanitizer.validation import error_envelope

from .. import provider_table
from ..capture import MAX_ERROR_BYTES, CaptureDraft, safe_headers
from ..client_watch import DISCONNECTED, STALLED
from ..exchange import Exchange, ProxyState, request_id_of
from ..logs import access_log, log, upstream_log
from ..settings import ProviderSettings, Settings
from ..upstreams.native import UpstreamError, forward_headers
from ..upstreams.streamed import Outcome
from ..upstreams.websocket import (
    HANDSHAKE_HEADERS,
    SocketRefused,
    answer_headers,
    handshake_headers,
    open_socket,
    socket_url,
)
from .credentials import check_client_key, request_secrets
from .errors import error_response
from .off_loop import long_transcript
from .send_native import credential_headers

# The POST route's own steps, so that an event is repaired, judged and logged exactly as a body is.
from .transcripts import NO_BETAS, Prepared, give_lessons, log_repair, run_repair, strict_refusal

FALLBACK_STATUS = 426
"""The handshake's answer where the upstream cannot carry the WebSocket: the client falls back to HTTPS."""
TURN_METHOD = "WEBSOCKET"
"""The method of a ``response.create`` event's exchange in the access line, the metrics and the page."""

_CLIENT_ID_LENGTH = 100
"""The longest client x-request-id taken for a connection: its turns' ids add ".N" to it."""
# The events that end a response's answer. OpenAI writes "type" first; any nested "type" of these
# names is inside a JSON string, its quotes escaped, which this does not match.
_TERMINAL = re.compile(r'"type"\s*:\s*"(response\.completed|response\.failed|response\.incomplete|error)"')
_CREATE = '"response.create"'
_BROKEN_UPSTREAM = 1014  # RFC 6455 §7.4.1's "Bad Gateway": the upstream's connection broke without a close frame


def responses_socket(route: provider_table.Route, settings: Settings) -> Callable[[WebSocket], Awaitable[None]]:
    """The WebSocket endpoint of a Responses row (``route.api == "openai-responses"``)."""
    cfg = settings.route(route.provider.name)
    served = cfg.serves()

    async def endpoint(ws: WebSocket) -> None:
        state: ProxyState = ws.app.state.suture
        conn = Exchange(state, {**ws.scope, "method": "GET"}, request_id_of(ws.scope, max_length=_CLIENT_ID_LENGTH))
        conn.destination.route, conn.destination.provider = route, route.provider
        conn.destination.label = f"{ws.scope['path']} (websocket)"
        conn.transcript.mode = cfg.mode or settings.mode
        socket = _Socket(ws, conn, route, cfg, settings)
        try:
            if served:
                await socket.run()
            else:
                name = route.provider.name
                await socket.deny(404, f"the {name} route is not enabled on this Suture ({name}.enabled)")
        finally:
            conn.finish()

    endpoint.__name__ = f"{route.name}_websocket"
    return endpoint


@dataclass(slots=True)
class _Turn:
    """A ``response.create`` sent upstream, until its answer's last event."""

    exchange: Exchange
    sent: float
    answered: bool = False


@dataclass(frozen=True, slots=True)
class _End:
    """How the relay ended: ``client`` (it closed), ``upstream`` (it closed), ``too_big`` (a client
    message over the limit), ``stalled`` (the client stopped reading)."""

    by: str
    code: int = 1000
    reason: str = ""
    clean: bool = True
    """The closing side sent a close frame (an upstream that vanished did not)."""


class _Socket:
    """One client's WebSocket and the upstream's, from the handshake to both closes."""

    def __init__(
        self, ws: WebSocket, conn: Exchange, route: provider_table.Route, cfg: ProviderSettings, settings: Settings
    ):
        self.ws = ws
        self.conn = conn
        self.route = route
        self.provider = route.provider
        self.cfg = cfg
        self.settings = settings
        self.state = conn.state
        self.mode = conn.transcript.mode or settings.mode
        self.limit = settings.max_body_bytes
        self.turn_scope: Scope = {**ws.scope, "method": TURN_METHOD}
        self.pending: collections.deque[_Turn] = collections.deque()
        self.turns = 0
        self.messages_in = 0
        self.messages_out = 0

    async def run(self) -> None:
        state, provider, conn = self.state, self.provider, self.conn
        denied = check_client_key(self.ws, provider, self.cfg)
        if denied is not None:
            await self.send_denial(denied)
            return
        elsewhere = sorted({t.name for t in state.router.targets if not (t.builtin and t.name == provider.name)})
        if elsewhere:
            await self.fall_back(
                "the routes setting may send a Responses request to another upstream "
                f"({', '.join(elsewhere)}) by its model, which each event names only once the WebSocket is open; "
                "Suture takes these requests over HTTPS (POST /v1/responses), where routes apply",
                upstream=False,
            )
            return
        upstream = state.upstreams.get(provider.name)
        if upstream is None or upstream.closed:
            await self.deny(503, "Suture is not ready: its upstream clients are not running")
            return
        drop, replace = credential_headers(provider, self.cfg, self.ws.headers)
        headers = forward_headers(self.ws.scope["headers"], drop=drop | HANDSHAKE_HEADERS, replace=replace)
        assert self.route.upstream_path is not None
        url = socket_url(upstream.base_url, self.route.upstream_path, self.ws.scope.get("query_string", b""))
        proxy = self.settings.upstream_proxy
        conn.destination.upstream = upstream.name
        sent = time.perf_counter()
        try:
            socket = await open_socket(
                url,
                upstream.base_url,
                handshake_headers(headers),
                subprotocols=self.ws.scope.get("subprotocols", ()),
                ssl_context=upstream.pool.ssl_context,
                proxy=proxy.get_secret_value() if proxy is not None else None,
                open_timeout=self.settings.timeouts.connect,
            )
        except SocketRefused as exc:
            conn.answered(exc.status, sent)
            await self.fall_back(state.secrets.redact_text(exc.describe()), upstream=True)
            return
        except UpstreamError as exc:
            conn.no_answer(exc.outcome, error=exc.cause)
            await self.deny(exc.status, state.secrets.redact_text(exc.describe()))
            return
        conn.answered(101, sent)
        try:
            answer = state.secrets.mask_headers(answer_headers(socket)) + conn.stamp()
            try:
                await self.ws.accept(subprotocol=socket.subprotocol, headers=answer)
            except (WebSocketDisconnect, OSError):
                conn.answer.status, conn.answer.outcome = 499, DISCONNECTED
                return
            conn.answer.status, conn.answer.started = 101, True
            end = await self._relay(socket)
            self._abandon(end)
            self._log_end(end)
        finally:
            await socket.close()  # at once if closed already; bounded by the library's close timeout
            self._abandon(None)

    # ------------------------------------------------------------------ before the handshake

    async def deny(self, status: int, message: str) -> None:
        """Refuse the handshake with Suture's own error, in the provider's shape."""
        await self.send_denial(error_response(self.provider, status, message))

    async def fall_back(self, reason: str, *, upstream: bool) -> None:
        """Refuse with 426, so that the client goes on over HTTPS at once."""
        self.conn.answer.outcome = "websocket_fallback"
        log(
            upstream_log,
            logging.WARNING if upstream else logging.INFO,
            "WebSocket refused; the client is told to use HTTPS (426)",
            request_id=self.conn.request_id,
            upstream=self.conn.destination.upstream or self.provider.name,
            reason=reason,
        )
        await self.deny(
            FALLBACK_STATUS, f"Suture cannot relay this WebSocket, use HTTPS (POST /v1/responses): {reason}"
        )

    async def send_denial(self, response: Response) -> None:
        # Suture's own answer: its id is the one an SDK's error can show, as on the POST route.
        for name, value in [*self.conn.stamp(), (b"x-request-id", self.conn.request_id.encode())]:
            response.headers[name.decode()] = value.decode()
        self.conn.answer.status = response.status_code
        if "websocket.http.response" in self.ws.scope.get("extensions", {}):
            await self.ws.send_denial_response(response)
        else:
            # A server without the denial extension answers a close before the handshake with 403.
            self.conn.answer.status = 403
            await self.ws.close(1008)

    # ------------------------------------------------------------------ the relay

    async def _relay(self, socket: ClientConnection) -> _End:
        reader = asyncio.create_task(self._from_client(socket))
        writer = asyncio.create_task(self._from_upstream(socket))
        try:
            done, _ = await asyncio.wait((reader, writer), return_when=asyncio.FIRST_COMPLETED)
            if writer not in done and reader.exception() is None and reader.result().by == "upstream":
                # The upstream closed under a client's message: what it sent before its close
                # still reaches the client, then its close does.
                await asyncio.wait([writer])
                done = {writer}
        finally:
            for task in (reader, writer):
                task.cancel()
        first = reader if reader in done else writer
        # The other side was cancelled: waited for, not awaited (awaiting would raise its CancelledError).
        await asyncio.wait([writer if first is reader else reader])
        end = first.result()  # an unexpected failure of either side is raised here
        if end.by == "upstream":
            code, reason = (end.code, end.reason) if end.clean else (_BROKEN_UPSTREAM, "the upstream connection broke")
            await self._close_client(code, reason)
            self.conn.answer.outcome = "complete" if end.clean else "upstream_error"
        elif end.by == "client":
            await socket.close(*_sendable(end.code, end.reason))
            # 1009: a message over the server's own limit (ws_max_size), refused before Suture saw it.
            self.conn.answer.outcome = (
                "message_too_big" if end.code == 1009 else "complete" if end.clean else DISCONNECTED
            )
        elif end.by == "too_big":
            await self._close_client(1009, end.reason)
            await socket.close(1001, "the client's connection was closed")
            self.conn.answer.outcome = "message_too_big"
        else:
            await socket.close(1001, "the client stopped reading")
            self.conn.answer.outcome = STALLED
        return end

    async def _from_client(self, socket: ClientConnection) -> _End:
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                code = message.get("code") or 1005
                return _End("client", code, message.get("reason") or "", clean=code != 1006)
            text: str | None = message.get("text")
            if text is not None:
                raw = text.encode()
                if len(raw) > self.limit:
                    return _too_big(len(raw), self.limit)
                self.messages_in += 1
                forwarded = await self._client_text(text, raw) if _CREATE in text else text
                if forwarded is None:
                    continue
            else:
                forwarded = message.get("bytes") or b""
                if len(forwarded) > self.limit:
                    return _too_big(len(forwarded), self.limit)
                self.messages_in += 1
            try:
                # A repaired event is serialised bytes: sent as the text it is, not as binary.
                await socket.send(forwarded, text=True if text is not None else None)
            except ConnectionClosed:
                return _upstream_end(socket)

    async def _from_upstream(self, socket: ClientConnection) -> _End:
        secrets = self.state.secrets
        try:
            async for message in socket:
                if isinstance(message, str):
                    text = secrets.mask_text(message) if secrets else message
                    end = await self._to_client({"type": "websocket.send", "text": text})
                    if end is None and self.pending:
                        self._server_event(text)
                else:
                    data = secrets.mask(message) if secrets else message
                    end = await self._to_client({"type": "websocket.send", "bytes": data})
                if end is not None:
                    return end
                self.messages_out += 1
        except ConnectionClosed:
            pass
        return _upstream_end(socket)

    async def _to_client(self, message: dict[str, Any]) -> _End | None:
        """Send one message to the client, which must take it within ``timeouts.client_send``."""
        try:
            async with asyncio.timeout(self.settings.timeouts.client_send):
                await self.ws.send(message)
        except TimeoutError:
            return _End("stalled", clean=False)
        except WebSocketDisconnect as exc:
            return _End("client", exc.code, exc.reason, clean=False)
        return None

    async def _close_client(self, code: int, reason: str) -> None:
        try:
            async with asyncio.timeout(self.settings.timeouts.client_send):
                await self.ws.close(code, reason)
        except (TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
            pass  # the client is gone already

    # ------------------------------------------------------------------ response.create events

    async def _client_text(self, text: str, raw: bytes) -> str | bytes | None:
        """What goes upstream for a client's text message: the message itself, a repaired
        ``response.create`` event, or nothing (strict mode refused it with an error event)."""
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return text  # not Suture's to judge: the upstream answers it
        if not isinstance(event, dict) or event.get("type") != "response.create":
            return text
        return await self._create(event, text, raw)

    async def _create(self, event: dict[str, Any], text: str, raw: bytes) -> str | bytes | None:
        state, route, mode = self.state, self.route, self.mode
        api, rules_for = route.api, route.rules_provider
        self.turns += 1
        turn = Exchange(state, self.turn_scope, f"{self.conn.request_id}.{self.turns}")
        turn.destination.route, turn.destination.provider = route, self.provider
        turn.destination.upstream = self.conn.destination.upstream
        record = turn.transcript
        record.mode = mode
        model = event.get("model")
        record.model = model if isinstance(model, str) else None
        loop = state.loop or asyncio.get_running_loop()
        # The event parsed whole is the body the rules read: they ignore its "type", and keep it.
        prepared = Prepared(None, event, None, rules_for, SanitizeResult(event), raw)
        if mode == "repair":
            give_lessons(prepared, state, self.provider.name, state.settings.route(self.provider.name), None)
            turn.destination.school = prepared.school
        prepared.long = long_transcript(event)
        if not prepared.long:
            prepared = run_repair(prepared, api, state, mode, None, turn.request_id)
        else:
            try:
                clean = looks_clean(event, api=api, policy=state.policy, provider=rules_for, model=None)
            except Exception:
                clean = False  # for the full pass to report or survive, as for any body
            if not clean or prepared.lessons:
                prepared = await loop.run_in_executor(
                    None, run_repair, prepared, api, state, mode, None, turn.request_id
                )
        if prepared.error is not None:
            await self._refuse(turn, 400, prepared.error)
            return None
        result = prepared.result
        record.found, record.repairs = len(result.repairs), result.repairs
        for repair in result.repairs:
            log_repair(turn.request_id, repair, mode)
        if mode == "strict":
            off_loop = functools.partial(loop.run_in_executor, None) if prepared.long else None
            message = await strict_refusal(result.repairs, event, api, rules_for, None, NO_BETAS, off_loop)
            if message is not None:
                state.metrics.rejections.labels(turn.destination.upstream_label).inc()
                if state.drafts:
                    record.draft = self._draft(turn, event, None, result.repairs)
                    record.strict_refusal = message
                await self._refuse(turn, 400, message)
                return None
        changed = prepared.content is not raw
        if changed:
            record.applied = len(result.repairs)
        if state.drafts:
            record.draft = self._draft(turn, event, result.body if changed else None, result.repairs)
        self.pending.append(_Turn(turn, time.perf_counter()))
        return prepared.content if changed else text

    async def _refuse(self, turn: Exchange, status: int, message: str) -> None:
        """Answer a ``response.create`` with an error event, as OpenAI answers its own refusals."""
        turn.answer.status = status
        status, body, _ = error_envelope(self.provider.errors, self.provider.core_name, message, status=status)
        assert isinstance(body, dict)
        try:
            await self._to_client(
                {"type": "websocket.send", "text": orjson.dumps({"type": "error", "status": status, **body}).decode()}
            )
        finally:
            turn.finish()

    def _draft(self, turn: Exchange, event: Any, forwarded: Any, repairs: list[Repair]) -> CaptureDraft:
        return CaptureDraft(
            request_id=turn.request_id,
            route=self.provider.name,
            path=self.ws.url.path,
            api=self.route.api,
            mode=self.mode,
            original=event,
            forwarded=forwarded,
            repairs=repairs,
            headers=safe_headers(self.ws.headers.raw),
            secrets=(*request_secrets(self.ws, self.cfg), *self.state.secrets.values),
        )

    def _server_event(self, text: str) -> None:
        """Account an upstream event to the oldest turn waiting for its answer."""
        turn = self.pending[0]
        exchange = turn.exchange
        if not turn.answered:
            # Its first event, as the head of a POST's answer: the upstream's time to answer.
            turn.answered = True
            exchange.answered(200, turn.sent)
        found = _TERMINAL.search(text)
        if found is None:
            return
        head = b""
        if found.group(1) == "error":
            try:
                event = orjson.loads(text)
            except orjson.JSONDecodeError:
                return
            if not isinstance(event, dict) or event.get("type") != "error":
                return
            status = event.get("status")
            exchange.upstream.status = status if isinstance(status, int) and 400 <= status < 600 else 500
            head = text.encode()[:MAX_ERROR_BYTES]
        exchange.answer.status = exchange.upstream.status or 200
        self.pending.popleft()
        exchange.ended(Outcome("complete", head=head))
        exchange.finish()

    def _abandon(self, end: _End | None) -> None:
        """The turns whose answer never ended: the connection closed first (``end``: how; None:
        Suture failed)."""
        by_client = end is not None and end.by in ("client", "too_big", "stalled")
        while self.pending:
            turn = self.pending.popleft()
            exchange = turn.exchange
            if by_client:
                assert end is not None
                # Nobody read an answer: nginx's "client closed request", as on the POST route.
                exchange.answer.status = 200 if turn.answered else 499
                exchange.ended(Outcome(STALLED if end.by == "stalled" else DISCONNECTED))
            elif turn.answered:
                exchange.answer.status = 200
                exchange.ended(Outcome("upstream_error", error="the WebSocket closed before the answer's last event"))
            else:
                exchange.answer.status = 502
                exchange.no_answer("upstream_closed", error="the WebSocket closed before any answer")
            exchange.finish()

    def _log_end(self, end: _End) -> None:
        log(
            access_log,
            logging.INFO,
            "websocket closed",
            request_id=self.conn.request_id,
            closed_by=end.by,
            code=end.code,
            reason=end.reason[:123],
            turns=self.turns,
            messages_in=self.messages_in,
            messages_out=self.messages_out,
        )


def _upstream_end(socket: ClientConnection) -> _End:
    received = socket.protocol.close_rcvd
    if received is None:
        return _End("upstream", 1006, "", clean=False)
    return _End("upstream", *_sendable(received.code, received.reason))


def _sendable(code: int, reason: str) -> tuple[int, str]:
    """A close code and reason as one side may send them on: 1005 (none given) is a plain 1000,
    1006 (the connection broke) and other reserved codes a 1001 (going away)."""
    if code in EXTERNAL_CLOSE_CODES or 3000 <= code < 5000:
        return code, reason
    return (1000, "") if code == 1005 else (1001, "")


def _too_big(size: int, limit: int) -> _End:
    return _End("too_big", 1009, f"message of {size} bytes over Suture's limit of {limit} bytes", clean=False)
