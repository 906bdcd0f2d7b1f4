"""The strict provider emulator: a fake OpenAI / Anthropic / Gemini / Bedrock server for tests and demos.

Every API on one port. It answers the five wire formats the way the real providers do where it
matters to Suture: the same 400 for a broken transcript (via :func:`sanitizer.validate`), the same
401/403 for a missing key or signature (any key is accepted; the texts say so), streams the
official SDKs parse (SSE; AWS event-stream for Bedrock), and a log of exactly what arrived. Around
them, what a newcomer's client calls first: ``GET /v1/models`` in the shape of the client that asks
(OpenAI's or Anthropic's), and OpenAI's embeddings and files, so that Suture's pass-through can be
tried offline.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from sanitizer import PROVIDERS, SanitizeError, error_envelope, validate

from . import (
    anthropic_messages,
    bedrock_converse,
    enforced,
    gemini,
    openai_chat,
    openai_embeddings,
    openai_files,
    openai_responses,
    responses_ws,
    together,
)
from .dialect import Dialect, Turn
from .extra_rules import ExtraRule
from .record import Recorder, parse_body, redact_headers
from .script import count_tokens, decide_reply, new_id
from .sse import SSEResponse
from .stored_chains import StoredChains

Provider = Literal["openai", "anthropic"]

# The providers' refusals of a request without a key (verbatim), each followed by what the emulator takes.
ACCEPTS_ANY = " (the emulator accepts any value)"
OPENAI_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization header using "
    "Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if "
    "you're accessing the API from your browser and are prompted for a username and password. You can "
    "obtain an API key from https://platform.openai.com/account/api-keys." + ACCEPTS_ANY
)
ANTHROPIC_MISSING_KEY = "x-api-key header is required" + ACCEPTS_ANY
GEMINI_MISSING_KEY = gemini.MISSING_KEY + ACCEPTS_ANY
ANTHROPIC_MISSING_VERSION = "anthropic-version: header is required"
OPENAI_BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your "
    "HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. "
    "If you have trouble figuring out how to fix this, please contact us through our help center at "
    "help.openai.com.)"
)
# Not captured from the live API; the shape is right, the wording is the emulator's.
ANTHROPIC_BAD_JSON = "There was an error parsing the body of your request: it is not valid JSON."
NOT_AN_OBJECT = "The request body must be a JSON object."

DIALECTS: dict[str, Dialect] = {
    "/v1/chat/completions": openai_chat.DIALECT,
    "/v1/responses": openai_responses.DIALECT,
    "/v1/messages": anthropic_messages.DIALECT,
    # Gemini's OpenAI-compatible endpoint: OpenAI's format and key, Gemini's rules and error body.
    "/v1beta/openai/chat/completions": dataclasses.replace(openai_chat.DIALECT, checks="gemini-openai-compat"),
}
# The OpenAI-compatible providers, each under its own name (``/deepseek/v1/chat/completions``):
# OpenAI's format and key, that provider's rules and error body, so a client (or a Suture
# upstream) pointed at ``<emulator>/deepseek/v1`` meets what DeepSeek would answer.
DIALECTS.update(
    {
        f"/{provider}/v1/chat/completions": dataclasses.replace(openai_chat.DIALECT, checks=provider)
        for provider in PROVIDERS["openai-chat"]
        if provider != "openai" and not provider.endswith("-openai-compat")
    }
)
# And those that serve the Responses API (Azure OpenAI): ``/azure/v1/responses``.
DIALECTS.update(
    {
        f"/{provider}/v1/responses": dataclasses.replace(openai_responses.DIALECT, checks=provider)
        for provider in PROVIDERS["openai-responses"]
        if provider != "openai"
    }
)
_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

# What ``GET /v1/models`` lists, by id and display name (the API routes answer for any model named).
_MODELS = {
    "openai": {name: name for name in ("gpt-4o-mini", "gpt-4.1", "gpt-5", "text-embedding-3-small")},
    "anthropic": {
        "claude-haiku-4-5": "Claude Haiku 4.5",
        "claude-sonnet-4-6": "Claude Sonnet 4.6",
        "claude-opus-4-7": "Claude Opus 4.7",
    },
}


@dataclass(frozen=True)
class EmulatorConfig:
    """How the emulator behaves. Every API's routes are served whatever ``provider`` is, each
    speaking its own provider's dialect; ``provider`` fixes the key check and the shape of the
    routes the APIs share (``GET /v1/models``, unknown paths), which by default (None) answer in
    the shape of the client that asks: Anthropic's for a request with ``x-api-key`` or
    ``anthropic-version``, Google's for one with a Gemini key (unknown paths), else OpenAI's."""

    provider: Provider | None = None
    record_path: Path | None = None
    require_api_key: bool = True
    stream_delay: float = 0.0
    """Seconds between SSE frames, so a test can cut a stream half-way."""
    extra_rules: tuple[ExtraRule, ...] = ()
    """Refusals on top of the validator's: rules Suture's sanitizer does not know."""
    enforce: tuple[str, ...] = ()
    """Other providers' violation codes the OpenAI Chat route enforces too (``enforced.py``)."""

    def __post_init__(self) -> None:
        if self.provider not in (None, "openai", "anthropic"):
            raise ValueError(f"provider must be 'openai', 'anthropic' or None, not {self.provider!r}")
        if self.stream_delay < 0:
            raise ValueError("stream_delay must not be negative")
        enforced.check_codes(self.enforce)


def build_emulator_app(config: EmulatorConfig) -> Starlette:
    """A Starlette app serving ``/v1/chat/completions``, ``/v1/responses``, ``/v1/messages``,
    Gemini's ``/v1[beta]/models/{model}:generateContent`` and ``:streamGenerateContent`` (also
    as Vertex AI serves them, ``/v1[beta1]/[projects/{p}/locations/{l}/]publishers/google/models/...``,
    with Vertex's texts), Gemini's OpenAI-compatible ``/v1beta/openai/chat/completions``, the other
    OpenAI-compatible providers' ``/{provider}/v1/chat/completions`` (``azure``, ``mistral``,
    ``deepseek``, ``groq``, ``moonshot``, ``minimax``, ``openrouter``, ``vllm``, ``cerebras``, ``dashscope``,
    ``llamacpp``, ``fireworks``, ``xai``, ``zhipu``, ``nim``, ``lmstudio``, ``ollama``, ``sglang``,
    ``sambanova``, ``together``: their rules and texts; Together's inferred one, ``together.py``)
    and Azure's ``/azure/v1/responses``,
    Bedrock's ``/model/{modelId}/converse`` and ``/converse-stream``, OpenAI's ``/v1/embeddings`` and
    ``/v1/files[/{file_id}[/content]]`` (``openai_embeddings.py``, ``openai_files.py``),
    ``GET /v1/models[/{model}]`` (see :class:`EmulatorConfig` for its shape) and ``GET /healthz``;
    and OpenAI's Responses WebSocket at ``/v1/responses`` (each ``response.create`` event counted
    and logged as a request).

    ``app.state.requests`` counts requests received (health checks excluded),
    ``app.state.disconnects`` counts streams the client abandoned, and ``app.state.config``
    is ``config``.
    """
    emulator = _Emulator(config)
    routes: list[BaseRoute] = [
        Route(path, emulator.recorded(functools.partial(emulator.answer, dialect)), methods=["POST"])
        for path, dialect in DIALECTS.items()
    ]
    routes += [
        # google-genai calls /v1 by default, /v1beta when asked (and the REST docs use v1beta).
        Route("/v1/models/{rest:path}", emulator.recorded(emulator.gemini), methods=["POST"]),
        Route("/v1beta/models/{rest:path}", emulator.recorded(emulator.gemini), methods=["POST"]),
        Route(
            "/{version:str}/publishers/google/models/{rest:path}", emulator.recorded(emulator.vertex), methods=["POST"]
        ),
        Route(
            "/{version:str}/projects/{project:str}/locations/{location:str}/publishers/google/models/{rest:path}",
            emulator.recorded(emulator.vertex),
            methods=["POST"],
        ),
        Route("/model/{model_id:path}/converse", emulator.recorded(emulator.converse), methods=["POST"]),
        Route("/model/{model_id:path}/converse-stream", emulator.recorded(emulator.converse), methods=["POST"]),
        # OpenAI's WebSocket mode: GET /v1/responses with Upgrade: websocket (responses_ws.py).
        WebSocketRoute("/v1/responses", emulator.responses_socket),
        Route("/v1/models", emulator.recorded(emulator.models), methods=["GET"]),
        # GET only: a POST under /v1/models/ is Gemini's generateContent (above).
        Route("/v1/models/{model_id:str}", emulator.recorded(emulator.models), methods=["GET"]),
        Route("/v1/embeddings", emulator.recorded(emulator.embeddings), methods=["POST"]),
        Route("/v1/files", emulator.recorded(emulator.upload_file), methods=["POST"]),
        Route("/v1/files", emulator.recorded(emulator.list_files), methods=["GET"]),
        Route("/v1/files/{file_id:str}", emulator.recorded(emulator.file), methods=["GET", "DELETE"]),
        Route("/v1/files/{file_id:str}/content", emulator.recorded(emulator.file_content), methods=["GET"]),
        Route("/healthz", _healthz, methods=["GET"]),
        Route("/{path:path}", emulator.recorded(emulator.unknown), methods=_ALL_METHODS),
    ]
    app = Starlette(routes=routes)
    app.state.config = config
    app.state.requests = 0
    app.state.disconnects = 0
    return app


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _json(status: int, body: Any, headers: dict[str, str]) -> Response:
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(content, status_code=status, headers=headers, media_type="application/json")


# An answer gets the request, its raw body and its index in the log, and returns the response
# (or, where it must parse a form, a coroutine of it).
Answer = Callable[[Request, bytes, int], Response | Awaitable[Response]]


class _Emulator:
    def __init__(self, config: EmulatorConfig) -> None:
        self.config = config
        self.recorder = Recorder(config.record_path)
        self.chains = StoredChains()
        self.files = openai_files.FileStore()

    def recorded(self, answer: Answer) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint that reads the body, numbers the request, answers, and logs the exchange."""

        async def endpoint(request: Request) -> Response:
            raw = await request.body()
            state = request.app.state
            index = state.requests
            state.requests += 1
            answered = answer(request, raw, index)
            response = answered if isinstance(answered, Response) else await answered
            self.recorder.request(
                index=index,
                path=request.url.path,
                headers=redact_headers(request.scope["headers"]),
                raw=raw,
                body=parse_body(raw),
                status=response.status_code,
            )
            return response

        return endpoint

    def client(self, request: Request) -> str:
        """Whose shape a route the APIs share answers in: the configured provider's, else that of
        the client that asks (the official SDKs each send their own key header)."""
        if self.config.provider is not None:
            return self.config.provider
        headers = request.headers
        if "anthropic-version" in headers or "x-api-key" in headers:
            return "anthropic"
        if "x-goog-api-key" in headers or "key" in request.query_params:
            return "gemini"
        return "openai"

    def models(self, request: Request, raw: bytes, index: int) -> Response:
        """``GET /v1/models`` and ``/v1/models/{model_id}``, in OpenAI's or Anthropic's shape."""
        provider = self.client(request)
        if provider not in _MODELS:
            return self.unknown(request, raw, index)
        headers = _request_id(provider)
        denied = self._auth_error(request, provider, headers)
        if denied is not None:
            return denied
        names = _MODELS[provider]
        model_id = request.path_params.get("model_id")
        # Any model is answered, as the API routes answer for any model named.
        listed = [model_id] if model_id is not None else list(names)
        if provider == "openai":
            models = [{"id": n, "object": "model", "created": 1_700_000_000, "owned_by": "system"} for n in listed]
            return _json(200, models[0] if model_id is not None else {"object": "list", "data": models}, headers)
        models = [
            {"type": "model", "id": n, "display_name": names.get(n, n), "created_at": "2025-01-01T00:00:00Z"}
            for n in listed
        ]
        if model_id is not None:
            return _json(200, models[0], headers)
        return _json(200, {"data": models, "has_more": False, "first_id": listed[0], "last_id": listed[-1]}, headers)

    def unknown(self, request: Request, raw: bytes, index: int) -> Response:
        provider = self.client(request)
        headers = _request_id(provider)
        denied = self._auth_error(request, provider, headers)
        if denied is not None:
            return denied
        if provider == "openai":
            return _json(404, _openai_error(f"Invalid URL ({request.method} {request.url.path})"), headers)
        if provider == "gemini":
            return self._error("gemini", f"Not Found: {request.url.path}", headers, status=404, kind="not_found_error")
        return self._error("anthropic-messages", "Not Found", headers, status=404, kind="not_found_error")

    def embeddings(self, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id("openai")
        denied = self._auth_error(request, "openai", headers)
        if denied is not None:
            return denied
        try:
            body = json.loads(raw)
        except ValueError:
            return _json(400, _openai_error(OPENAI_BAD_JSON), headers)
        if not isinstance(body, dict):
            return _json(400, _openai_error(NOT_AN_OBJECT), headers)
        refusal = openai_embeddings.refusal(body)
        if refusal is not None:
            return _json(400, _openai_error(refusal), headers)
        return _json(200, openai_embeddings.render(body), headers)

    async def upload_file(self, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id("openai")
        denied = self._auth_error(request, "openai", headers)
        if denied is not None:
            return denied
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            return _json(400, _openai_error(openai_files.NOT_MULTIPART), headers)
        # The body is already read (and logged): the form is parsed from that copy.
        async with request.form() as form:
            upload, purpose = form.get("file"), form.get("purpose")
            if upload is None or isinstance(upload, str):
                return _json(400, _openai_error(openai_files.MISSING.format(field="file")), headers)
            if not isinstance(purpose, str) or not purpose:
                return _json(400, _openai_error(openai_files.MISSING.format(field="purpose")), headers)
            if purpose not in openai_files.PURPOSES:
                return _json(400, _openai_error(openai_files.BAD_PURPOSE.format(purpose=purpose)), headers)
            content = await upload.read()
            meta = self.files.upload(upload.filename or "upload", content, purpose)
        return _json(200, meta, headers)

    def list_files(self, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id("openai")
        denied = self._auth_error(request, "openai", headers)
        if denied is not None:
            return denied
        query = request.query_params
        limit = query.get("limit", "10000")
        if not limit.isdigit() or not 1 <= int(limit) <= 10_000:
            return _json(
                400, _openai_error(f"Invalid 'limit': {limit!r}. Expected an integer from 1 to 10000."), headers
            )
        listing = self.files.listing(
            purpose=query.get("purpose"), order=query.get("order", "desc"), after=query.get("after"), limit=int(limit)
        )
        return _json(200, listing, headers)

    def file(self, request: Request, raw: bytes, index: int) -> Response:
        """``GET`` (the file object) or ``DELETE`` (the receipt) ``/v1/files/{file_id}``."""
        headers = _request_id("openai")
        denied = self._auth_error(request, "openai", headers)
        if denied is not None:
            return denied
        file_id = request.path_params["file_id"]
        if request.method == "DELETE":
            answer = self.files.delete(file_id)
        else:
            stored = self.files.get(file_id)
            answer = None if stored is None else stored.meta
        if answer is None:
            return _json(404, _no_such_file(file_id), headers)
        return _json(200, answer, headers)

    def file_content(self, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id("openai")
        denied = self._auth_error(request, "openai", headers)
        if denied is not None:
            return denied
        stored = self.files.get(request.path_params["file_id"])
        if stored is None:
            return _json(404, _no_such_file(request.path_params["file_id"]), headers)
        return Response(stored.content, headers=headers, media_type="application/octet-stream")

    def answer(self, dialect: Dialect, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id(dialect.provider)
        turn = self._turn(dialect, request, raw, headers, model=None)
        if isinstance(turn, Response):
            return turn
        if dialect.api != "openai-responses":
            if turn.body.get("stream") is True:
                return self._stream(dialect, turn, request, index, headers)
            return _json(200, dialect.render(turn), headers)
        refusal = self.chains.unanswered(turn.body)
        if refusal is not None:
            return self._error(dialect.api, refusal, headers)
        if turn.body.get("stream") is True:
            frames = dialect.stream(turn)
            self.chains.remember_stream(turn.body, frames)
            return self._stream(dialect, turn, request, index, headers, frames=frames)
        rendered = dialect.render(turn)
        self.chains.remember(turn.body, rendered)
        return _json(200, rendered, headers)

    def gemini(self, request: Request, raw: bytes, index: int, *, dialect: Dialect = gemini.DIALECT) -> Response:
        headers = _request_id("gemini")
        model, _, method = request.path_params["rest"].rpartition(":")
        if not model or method not in ("generateContent", "streamGenerateContent"):
            return self._error("gemini", f"Method not found: {method or request.url.path}.", headers, status=404)
        turn = self._turn(dialect, request, raw, headers, model=model)
        if isinstance(turn, Response):
            return turn
        if method == "generateContent":
            return _json(200, gemini.DIALECT.render(turn), headers)
        if request.query_params.get("alt") == "sse":
            return self._stream(gemini.DIALECT, turn, request, index, headers)
        return _json(200, gemini.stream_chunks(turn), headers)

    def vertex(self, request: Request, raw: bytes, index: int) -> Response:
        # Vertex AI serves the same generateContent body, checked with Vertex's texts.
        if request.path_params["version"] not in ("v1", "v1beta1"):
            return self.unknown(request, raw, index)
        return self.gemini(request, raw, index, dialect=gemini.VERTEX)

    def converse(self, request: Request, raw: bytes, index: int) -> Response:
        headers = _request_id("bedrock")
        dialect = bedrock_converse.DIALECT
        turn = self._turn(dialect, request, raw, headers, model=request.path_params["model_id"])
        if isinstance(turn, Response):
            return turn
        if request.url.path.endswith("/converse-stream"):
            return self._stream(dialect, turn, request, index, headers, media_type=bedrock_converse.STREAM_MEDIA_TYPE)
        return _json(200, dialect.render(turn), headers)

    def _turn(
        self, dialect: Dialect, request: Request, raw: bytes, headers: dict[str, str], *, model: str | None
    ) -> Turn | Response:
        """The scripted turn for a request the provider would accept, else the provider's error.

        ``model`` is the one named in the path (Gemini, Bedrock); otherwise the body's."""
        denied = self._auth_error(request, dialect.provider, headers)
        if denied is not None:
            return denied
        if dialect.provider == "anthropic" and not request.headers.get("anthropic-version"):
            return self._error(dialect.api, ANTHROPIC_MISSING_VERSION, headers)
        return self._judge(dialect, raw, headers, model=model)

    def _judge(self, dialect: Dialect, raw: bytes, headers: dict[str, str], *, model: str | None) -> Turn | Response:
        """The scripted turn for a body the provider would accept, else the provider's error."""
        try:
            body = json.loads(raw)
        except ValueError:
            return self._error(dialect.api, _BAD_JSON[dialect.provider], headers)
        if not isinstance(body, dict):
            return self._error(dialect.api, NOT_AN_OBJECT, headers)
        if (missing := dialect.missing_field(body)) is not None:
            return self._error(dialect.api, missing, headers)
        try:
            # The model matters to some rules (Gemini 3's thought signatures); a path names it for Gemini.
            violations = validate(body, api=dialect.api, provider=dialect.checks, model=model)
        except SanitizeError as exc:
            return self._error(dialect.api, str(exc), headers)
        if violations:
            first = violations[0]
            return _json(first.status, first.body, {**headers, **first.headers})
        if dialect.checks == "together" and (text := together.refusal(body)) is not None:
            status, error, extra = error_envelope(dialect.api, "together", text)
            return _json(status, error, {**headers, **extra})
        if self.config.enforce and dialect.api == "openai-chat" and dialect.provider == "openai":
            answer = enforced.refusal(body, self.config.enforce, model or body.get("model"))
            if answer is not None:
                return self._error(dialect.api, answer[1], headers, status=answer[0])
        for rule in self.config.extra_rules:
            refusal = rule.refusal(body) if rule.api == dialect.api else None
            if refusal is not None:
                return self._error(dialect.api, refusal, headers, status=rule.status)

        return Turn(
            body=body,
            model=model if model is not None else body["model"],
            reply=decide_reply(dialect.last_user_text(body)),
            input_tokens=count_tokens(dialect.prompt(body)),
            created=int(time.time()),
        )

    def _stream(
        self,
        dialect: Dialect,
        turn: Turn,
        request: Request,
        index: int,
        headers: dict[str, str],
        *,
        media_type: str | None = None,
        frames: list[bytes] | None = None,
    ) -> Response:
        """The dialect's frames (``frames``, if already made), paced by ``stream_delay``: SSE unless
        ``media_type`` says otherwise."""
        return SSEResponse(
            dialect.stream(turn) if frames is None else frames,
            delay=self.config.stream_delay,
            headers=headers if media_type is None else {**headers, "content-type": media_type},
            on_disconnect=functools.partial(self._disconnected, request, index),
        )

    async def responses_socket(self, ws: WebSocket) -> None:
        """``/v1/responses`` over a WebSocket: each ``response.create`` judged as a POST body is."""
        headers = _request_id("openai")
        await responses_ws.serve(
            ws,
            denial=self._auth_error(ws, "openai", headers),
            judge=functools.partial(self._judge, openai_responses.DIALECT, headers=headers, model=None),
            chains=self.chains,
            recorder=self.recorder,
            delay=self.config.stream_delay,
        )

    def _auth_error(self, request: HTTPConnection, provider: str, headers: dict[str, str]) -> Response | None:
        if not self.config.require_api_key:
            return None
        bearer = request.headers.get("authorization", "")
        has_bearer = bearer[:7].lower() == "bearer " and bool(bearer[7:].strip())
        if provider == "openai" and not has_bearer:
            return _json(401, _openai_error(OPENAI_MISSING_KEY), headers)
        # Anthropic also accepts OAuth-style bearer tokens (the SDK's ``auth_token``).
        if provider == "anthropic" and not (request.headers.get("x-api-key") or has_bearer):
            return self._error(
                "anthropic-messages", ANTHROPIC_MISSING_KEY, headers, status=401, kind="authentication_error"
            )
        if provider == "gemini" and not (request.headers.get("x-goog-api-key") or request.query_params.get("key")):
            return self._error("gemini", GEMINI_MISSING_KEY, headers, status=403, kind="permission_error")
        # Vertex AI takes an express-mode API key or a Google OAuth token (not checked).
        if provider == "vertex" and not (request.headers.get("x-goog-api-key") or has_bearer):
            return self._error("gemini", GEMINI_MISSING_KEY, headers, status=403, kind="permission_error")
        # Bedrock takes SigV4 only here (the signature itself is not checked): a request that
        # reached the emulator through Suture proves Suture signed it.
        if provider == "bedrock" and not bearer.startswith("AWS4-HMAC-SHA256 "):
            return _json(
                403,
                {"message": bedrock_converse.MISSING_SIGNATURE},
                {**headers, "x-amzn-ErrorType": "MissingAuthenticationTokenException"},
            )
        return None

    def _error(
        self, api: str, message: str, headers: dict[str, str], *, status: int = 400, kind: str = "invalid_request_error"
    ) -> Response:
        status, body, extra = error_envelope(api, None, message, status=status, kind=kind)
        return _json(status, body, {**headers, **extra})

    def _disconnected(self, request: Request, index: int, frames_sent: int) -> None:
        # Recorded before it is counted: whoever sees the count can read the record.
        self.recorder.disconnect(index=index, path=request.url.path, frames_sent=frames_sent)
        request.app.state.disconnects += 1


def _openai_error(message: str, param: str | None = None) -> dict[str, Any]:
    # OpenAI sends a missing key and an unknown URL as plain invalid requests with a null code,
    # where error_envelope would give a 401/404 its specific code.
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


def _no_such_file(file_id: str) -> dict[str, Any]:
    return _openai_error(openai_files.NO_SUCH_FILE.format(file_id=file_id), param="id")


_BAD_JSON = {
    "openai": OPENAI_BAD_JSON,
    "anthropic": ANTHROPIC_BAD_JSON,
    "gemini": gemini.BAD_JSON,
    "vertex": gemini.BAD_JSON,
    "bedrock": bedrock_converse.BAD_JSON,
}


def _request_id(provider: str) -> dict[str, str]:
    if provider == "anthropic":
        return {"request-id": new_id("req_")}
    if provider == "bedrock":
        return {"x-amzn-RequestId": str(uuid.uuid4())}
    if provider == "gemini":
        # Google sends no request id header; this one is the emulator's, for the record.
        return {"x-emulator-request-id": new_id("req_", 32)}
    return {"x-request-id": new_id("req_", 32)}
