"""Loopback fakes of the providers litellm reaches: each checks the transcript with the provider's
own validator and answers the provider's real error body, or a scripted reply in its format."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from proxy.emulator import anthropic_messages, bedrock_converse, gemini, openai_chat
from proxy.emulator.dialect import Dialect, Turn
from proxy.emulator.script import count_tokens, decide_reply
from proxy.emulator.sse import SSEResponse
from sanitizer import error_envelope, validate

_DIALECTS: dict[str, Dialect] = {
    "openai-chat": openai_chat.DIALECT,
    "anthropic-messages": anthropic_messages.DIALECT,
    "gemini": gemini.DIALECT,
    "bedrock-converse": bedrock_converse.DIALECT,
}
# A last user text "FAIL 429" makes the fake answer that status with the provider's error body.
_FAIL = re.compile(r"FAIL (\d{3})")
FAIL_MESSAGE = "the fake provider was told to fail"


@dataclass
class Arrival:
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int = 0


@dataclass
class ProviderFake:
    """One provider's endpoint: ``api`` is its wire format, ``provider`` whose rules apply."""

    api: str
    provider: str | None = None
    stream_delay: float = 0.0
    """Seconds between streamed events, so a test can leave a stream half-way."""
    received: list[Arrival] = field(default_factory=list)
    disconnects: int = 0

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.handle, methods=["POST"])])

    @property
    def last(self) -> Arrival:
        return self.received[-1]

    async def handle(self, request: Request) -> Response:
        dialect = _DIALECTS[self.api]
        body = json.loads(await request.body())
        arrival = Arrival(request.url.path, request.url.query, dict(request.headers), body)
        self.received.append(arrival)
        response = self._answer(dialect, request, body)
        arrival.status = response.status_code
        return response

    def _answer(self, dialect: Dialect, request: Request, body: dict[str, Any]) -> Response:
        violations = validate(body, api=self.api, provider=self.provider)
        if violations:
            first = violations[0]
            return _json(first.status, first.body, first.headers)
        text = dialect.last_user_text(body)
        if text is not None and (match := _FAIL.search(text)):
            message = FAIL_MESSAGE
            if match[1] == "401":
                # As OpenAI does ("Incorrect API key provided: sk-..."): the refused key, quoted.
                message += f"; incorrect API key provided: {_presented_key(request)}"
            status, error, headers = error_envelope(self.api, self.provider, message, status=int(match[1]))
            return _json(status, error, headers)
        model = body.get("model") or _model_in_path(request.url.path)
        turn = Turn(
            body=body,
            model=model,
            reply=decide_reply(text),
            input_tokens=count_tokens(dialect.prompt(body)),
            created=int(time.time()),
        )
        if not _wants_stream(request, body):
            return _json(200, dialect.render(turn), {})
        media_type = bedrock_converse.STREAM_MEDIA_TYPE if self.api == "bedrock-converse" else "text/event-stream"
        return SSEResponse(
            dialect.stream(turn),
            delay=self.stream_delay,
            headers={"content-type": media_type},
            on_disconnect=self._disconnected,
        )

    def _disconnected(self, frames_sent: int) -> None:
        self.disconnects += 1


def _presented_key(request: Request) -> str:
    bearer = request.headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        return bearer[7:]
    return request.headers.get("x-api-key") or request.headers.get("x-goog-api-key") or ""


def _wants_stream(request: Request, body: dict[str, Any]) -> bool:
    path = request.url.path
    return body.get("stream") is True or path.endswith((":streamGenerateContent", "/converse-stream"))


def _model_in_path(path: str) -> str:
    # Gemini: /v1beta/models/{model}:method; Bedrock: /model/{modelId}/converse[-stream].
    if "/models/" in path:
        return path.rpartition("/models/")[2].partition(":")[0]
    return path.removeprefix("/model/").rpartition("/")[0]


def _json(status: int, body: Any, headers: dict[str, str]) -> Response:
    return Response(json.dumps(body).encode(), status_code=status, headers=headers, media_type="application/json")
