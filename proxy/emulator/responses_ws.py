"""OpenAI Responses over a WebSocket (``GET /v1/responses`` with ``Upgrade: websocket``): OpenAI's
WebSocket mode, Codex CLI's default transport.

Each ``response.create`` event is a Responses body with a ``type``. It is judged as a ``POST
/v1/responses`` body is, by the same checks, so a broken transcript gets the same message, sent as
an ``error`` event with the status the POST would have had (the shape OpenAI's SDKs and Codex
read: ``{"type": "error", "status": 400, "error": {...}}``). An accepted one is answered with the
events the SSE stream carries, each one JSON text message; with ``generate: false`` (Codex's
warm-up of a new connection), with a response that has no output. ``response.processed`` (Codex's
acknowledgement) is taken silently. The handshake itself is refused as a POST would be (401
without a bearer key).

For tests: a final user turn ``CLOSE_SOCKET <code> [reason]`` makes the emulator close the
WebSocket with that code and reason instead of answering, as a provider ending the connection.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from sanitizer import error_envelope

from . import openai_responses
from .dialect import Turn
from .record import Recorder, parse_body, redact_headers
from .stored_chains import StoredChains

_CLOSE = re.compile(r"CLOSE_SOCKET\s+([0-9]{4})(?:\s+(.+))?")
UNSUPPORTED_BINARY = "Binary messages are not supported; send each event as one JSON text message."


def error_event(status: int, body: Any) -> str:
    """An ``error`` event: the error body a POST would have had (``{"error": {...}}``) and its status."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {"type": "invalid_request_error", "code": None, "message": str(body), "param": None}
    return json.dumps({"type": "error", "status": status, "error": error}, ensure_ascii=False, separators=(",", ":"))


def _refusal(message: str) -> str:
    status, body, _ = error_envelope("openai-responses", None, message)
    return error_event(status, body)


async def serve(
    ws: WebSocket,
    *,
    denial: Response | None,
    judge: Callable[[bytes], Turn | Response],
    chains: StoredChains,
    recorder: Recorder,
    delay: float,
) -> None:
    """One client's WebSocket, from its handshake (refused with ``denial``, if any) to its close.

    ``judge`` is the POST route's check of a body: the scripted turn, or the error answer.
    """
    if denial is not None:
        if "websocket.http.response" in ws.scope.get("extensions", {}):
            await ws.send_denial_response(denial)
        else:
            await ws.close(1008)
        return
    await ws.accept()
    state = ws.app.state
    path = ws.url.path
    headers = redact_headers(ws.scope["headers"])
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            recorder.closed(path=path, code=message.get("code") or 1005, reason=message.get("reason") or "")
            return
        text: str | None = message.get("text")
        if text is None:
            await ws.send_text(_refusal(UNSUPPORTED_BINARY))
            continue
        raw = text.encode()
        try:
            event = json.loads(raw)
        except ValueError:
            event = None
        if isinstance(event, dict) and event.get("type") == "response.processed":
            continue
        index = state.requests
        state.requests += 1
        answer, status, close = _answer(event, raw, judge, chains)
        recorder.request(index=index, path=path, headers=headers, raw=raw, body=parse_body(raw), status=status)
        if close is not None:
            await ws.close(*close)
            return
        for sent, item in enumerate(answer):
            if sent and delay:
                await asyncio.sleep(delay)
            try:
                await ws.send_text(item)
            except WebSocketDisconnect:
                recorder.disconnect(index=index, path=path, frames_sent=sent)
                state.disconnects += 1
                return


def _answer(
    event: Any, raw: bytes, judge: Callable[[bytes], Turn | Response], chains: StoredChains
) -> tuple[list[str], int, tuple[int, str] | None]:
    """The messages answering one client message, the status a POST would have had, and the
    close (code, reason) the transcript asks for, if it does."""
    if not isinstance(event, dict):
        return [_refusal("We could not parse the JSON body of your request.")], 400, None
    kind = event.get("type")
    if kind != "response.create":
        return [_refusal(f"Invalid value: {kind!r}. Supported values are: 'response.create'.")], 400, None
    verdict = judge(raw)
    if isinstance(verdict, Response):
        return [error_event(verdict.status_code, json.loads(bytes(verdict.body)))], verdict.status_code, None
    refused = chains.unanswered(verdict.body)
    if refused is not None:
        return [_refusal(refused)], 400, None
    asked = _CLOSE.search(openai_responses.DIALECT.last_user_text(verdict.body) or "")
    if asked is not None:
        return [], 200, (int(asked.group(1)), asked.group(2) or "")
    if verdict.body.get("generate") is False:
        events = openai_responses.warmup_events(verdict)
    else:
        events = openai_responses.events(verdict)
        chains.remember(verdict.body, events[-1]["response"])
    return [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events], 200, None
