"""litellm upstreams: a repaired request in the client's format, sent through litellm's async API,
and the answer (JSON or a stream) back in the client's format.

litellm is imported on the first request that needs it, in a worker thread: it takes seconds and
tens of MiB, which a proxy that only passes traffic through natively should never pay.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import logging
import os
import re
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal, TypeGuard, get_args

import anyio
import anyio.to_thread
import httpx
import orjson

from ..client_watch import ClientWatch
from ..redaction import RedactedRecords, Secrets
from .streamed import Outcome, StreamedAnswer, UpstreamBroke, UpstreamFailure

MessageReader = Callable[[Any], "str | None"]
"""A provider's error body (parsed JSON) to its message, None when it holds none."""

ClientAPI = Literal["openai-chat", "openai-responses", "anthropic-messages"]

# Only the fields of each format's request are handed to litellm: its keyword arguments also
# include api_base, api_key, aws_* and mock_response, which a client must never set.
_CHAT_FIELDS = frozenset(
    {
        "audio",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "metadata",
        "modalities",
        "n",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "reasoning_effort",
        "response_format",
        "seed",
        "service_tier",
        "stop",
        "stream_options",
        "temperature",
        "tool_choice",
        "tools",
        "top_logprobs",
        "top_p",
        "user",
        "web_search_options",
    }
)
_MESSAGES_FIELDS = frozenset(
    {"max_tokens", "metadata", "stop_sequences", "system", "temperature", "thinking"}
    | {"tool_choice", "tools", "top_k", "top_p"}
)
# The Responses API's own keyword arguments of litellm.aresponses. Not previous_response_id,
# prompt or background: they name state kept at OpenAI, which a bridged provider does not have
# (routes/send_litellm.py refuses such requests with a 400 rather than drop the state silently).
_RESPONSES_FIELDS = frozenset(
    {
        "include",
        "instructions",
        "max_output_tokens",
        "metadata",
        "parallel_tool_calls",
        "reasoning",
        "safety_identifier",
        "service_tier",
        "store",
        "temperature",
        "text",
        "tool_choice",
        "tools",
        "top_p",
        "truncation",
        "user",
    }
)
# The keys under which any format's answers carry a tool call's id (Responses: call_id).
_ID_KEYS = frozenset({"id", "call_id", "tool_call_id", "tool_use_id"})
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]

_lock = threading.Lock()
_module: ModuleType | None = None
# Each running app adds its registry of secrets while it serves (app.py).
log_redaction = RedactedRecords()


def _import_litellm() -> ModuleType:
    global _module
    with _lock:
        if _module is None:
            # litellm fetches its model price map from the network at import unless told not to;
            # Suture needs no prices, and start-up must not wait on (or leak to) the network.
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            module: Any = importlib.import_module("litellm")
            module.suppress_debug_info = True  # its banners go to stdout, beside our JSON log lines
            # An OpenAI-compatible upstream speaks Chat Completions; litellm would otherwise send an
            # Anthropic client's openai/* requests to the Responses API.
            module.use_chat_completions_url_for_anthropic_messages = True
            # litellm's loggers print plain text through handlers of their own: their records go
            # to the root logger instead, whose handler writes Suture's JSON lines (once each).
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                litellm_logger = logging.getLogger(name)
                litellm_logger.handlers.clear()
                litellm_logger.propagate = True
                litellm_logger.addFilter(log_redaction)
            _module = module
    return _module


async def load_litellm() -> ModuleType:
    """litellm, imported once per process in a worker thread so the event loop keeps serving."""
    if _module is not None:
        return _module
    return await anyio.to_thread.run_sync(_import_litellm)


async def aclose() -> None:
    """Close litellm's pooled clients of this event loop's lifetime, if litellm was ever loaded."""
    if _module is None:
        return
    await _module.close_litellm_async_clients()
    # litellm's module-level client (its Responses bridge streams through it) is not in that
    # cache once made; closed, it would reopen its session in the next app's loop and leak there.
    shared = vars(_module).pop("module_level_aclient", None)
    if shared is not None:
        with contextlib.suppress(Exception):
            await shared.close()
    # A later app in this process (tests, a reload) must not be handed the closed clients: both
    # are made anew (module_level_aclient by litellm's lazy attribute) on next use.
    _module.in_memory_llm_clients_cache.flush_cache()


def is_client_api(api: str) -> TypeGuard[ClientAPI]:
    """Whether litellm can answer a request of ``api`` in that same format."""
    return api in get_args(ClientAPI)


@dataclass(frozen=True)
class LitellmCall:
    """One request as litellm receives it."""

    api: ClientAPI
    model: str
    body: dict[str, Any]
    stream: bool
    api_base: str | None
    api_key: str | None
    timeout: httpx.Timeout | None = None
    read_message: MessageReader | None = None
    """Reads the provider's message out of its error body (parsed JSON), for the client and the
    rejection repair; without one, litellm's text (its wrapping cut) is the message."""


class GatewayError(UpstreamFailure):
    """litellm or the provider refused: ``status`` and the provider's own ``message``."""

    def __init__(self, status: int, message: str, outcome: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.outcome = outcome


async def call(call: LitellmCall) -> Any:
    """The provider's answer: a dict, or (streams) an async iterator. Raises :class:`GatewayError`."""
    litellm = await load_litellm()
    body = call.body
    kwargs: dict[str, Any] = {"model": call.model, "stream": call.stream}
    if call.api_base is not None:
        kwargs["api_base"] = call.api_base
    if call.api_key is not None:
        kwargs["api_key"] = call.api_key
    if call.timeout is not None:
        kwargs["timeout"] = call.timeout
    try:
        if call.api == "openai-responses":
            kwargs.update((k, v) for k, v in body.items() if k in _RESPONSES_FIELDS)
            # litellm speaks the Responses API to providers that have it and bridges the others
            # (Anthropic, Gemini...) through its chat completions, answering in Responses events.
            # An openai/* model is an OpenAI-compatible server, which speaks Chat Completions (as
            # for Anthropic clients above): litellm would otherwise call its /responses.
            bridge = call.model.startswith("openai/")
            response = await litellm.aresponses(
                input=body.get("input"), drop_params=True, use_chat_completions_api=bridge, **kwargs
            )
            if call.stream:
                return await _begun(response)
            return response.model_dump(mode="json")
        kwargs["messages"] = body.get("messages")
        if call.api == "openai-chat":
            kwargs.update((k, v) for k, v in body.items() if k in _CHAT_FIELDS)
            # Parameters a provider lacks are dropped rather than failing the agent's request.
            response = await litellm.acompletion(drop_params=True, **kwargs)
            if call.stream:
                return await _begun(response)
            return response.model_dump(mode="json")
        kwargs.update((k, v) for k, v in body.items() if k in _MESSAGES_FIELDS)
        kwargs.setdefault("max_tokens", 4096)
        response = await litellm.anthropic.messages.acreate(drop_params=True, **kwargs)
        if call.stream:
            return await _begun(response)
        return response
    except Exception as exc:
        raise _gateway_error(exc, call.read_message) from exc


class _Begun:
    """A provider's stream whose answer has begun: its first items have already arrived.

    Some streams only connect when first read (Gemini's), and litellm's Anthropic adapter makes
    up a ``message_start`` before it calls the provider: a failure to reach the provider must
    surface while the client can still be given a status, not as an error event after a 200.
    """

    def __init__(self, stream: Any, iterator: AsyncIterator[Any], head: list[Any], ended: bool) -> None:
        self.stream = stream
        self.iterator = iterator
        self.head = head
        self.ended = ended

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._items()

    async def _items(self) -> AsyncIterator[Any]:
        for item in self.head:
            yield item
        if self.ended:
            return
        while True:
            try:
                item = await _next(self.stream, self.iterator)
            except StopAsyncIteration:
                return
            yield item

    async def aclose(self) -> None:
        await _close(self.stream)


async def _begun(stream: Any) -> _Begun:
    iterator = stream.__aiter__()
    head: list[Any] = []
    try:
        while not head or _is_preamble(head[-1]):
            head.append(await _next(stream, iterator))
    except StopAsyncIteration:
        return _Begun(stream, iterator, head, ended=True)
    except BaseException:
        await _close(stream)
        raise
    return _Begun(stream, iterator, head, ended=False)


async def _next(stream: Any, iterator: AsyncIterator[Any]) -> Any:
    item = await iterator.__anext__()
    # litellm's Anthropic adapter turns a provider's failure into an error event of its own
    # wording; the failure itself it keeps here, for Suture to classify like any other.
    failure = getattr(stream, "stream_failure", None)
    if isinstance(failure, BaseException):
        raise failure
    return item


def _is_preamble(item: Any) -> bool:
    # Events an Anthropic stream sends before the provider's first token (the adapter's own).
    return isinstance(item, bytes) and item.startswith((b"event: message_start", b"event: ping"))


# Failures to reach the provider, whatever litellm wraps them in: its exception classes differ by
# provider for the same DNS failure (InternalServerError for Anthropic, APIConnectionError for
# Gemini, ServiceUnavailableError for Bedrock's streams), but each keeps the transport's own error
# in its chain of causes.
_TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, TimeoutError)
_UNREACHABLE: tuple[type[BaseException], ...] = (httpx.TransportError, OSError)


def _gateway_error(exc: BaseException, read_message: MessageReader | None = None) -> GatewayError:
    causes = _causes(exc)
    reason = _reason(causes[-1])
    timed_out = any(isinstance(cause, _TIMEOUTS) or _is_litellm("Timeout", cause) for cause in causes)
    if timed_out and not any(isinstance(cause, httpx.ConnectTimeout) for cause in causes):
        return GatewayError(504, f"the provider did not answer in time: {reason}", "timeout")
    if timed_out or any(isinstance(cause, _UNREACHABLE) for cause in causes):
        return GatewayError(502, f"Suture could not reach the provider: {reason}", "unreachable")
    status = getattr(exc, "status_code", None)
    # litellm raises its APIConnectionError (status 500) for faults of its own, too.
    if _is_litellm("APIConnectionError", exc) or not isinstance(status, int) or not 400 <= status <= 599:
        message = _provider_message(exc, read_message)
        return GatewayError(502, f"litellm failed: {type(exc).__name__}: {message}", "litellm_error")
    return GatewayError(status, _provider_message(exc, read_message), str(status))


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what caused it, outermost first, each once."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _is_litellm(name: str, exc: BaseException) -> bool:
    kind = getattr(_module, name, None)
    return isinstance(kind, type) and isinstance(exc, kind)


def _reason(exc: BaseException) -> str:
    # The transport's own words ("[Errno -2] Name or service not known"), one line, or its kind.
    text = str(exc).strip().partition("\n")[0]
    return text or type(exc).__name__


_LITELLM_PREFIX = re.compile(r"^(?:(?:litellm\.)?\w+Error:\s*)+(?:\w+Exception\s*(?:\w+Error)?\s*-\s*)?")


def _provider_message(exc: BaseException, read_message: MessageReader | None) -> str:
    """The provider's own message out of litellm's wrapping (``litellm.BadRequestError: MistralException - {...}``)."""
    text = str(getattr(exc, "message", None) or exc)
    # litellm appends the traceback of a fault inside itself; the client needs the first line.
    text = _LITELLM_PREFIX.sub("", text.partition("\nTraceback (most recent call last)")[0]).strip()
    start = text.find("{")
    if start >= 0 and read_message is not None:
        body = text[start:]
        if text[start - 2 : start] in ("b'", 'b"'):
            # A streamed request's refusal: litellm quotes the provider's body as a bytes repr.
            with contextlib.suppress(ValueError, SyntaxError, UnicodeDecodeError):
                body = ast.literal_eval(text[start - 2 :]).decode()
        try:
            found = read_message(orjson.loads(body))
        except orjson.JSONDecodeError:
            found = None
        if found:
            return found
    return text


def restore_ids(value: Any, restore: dict[str, str]) -> Any:
    """``value`` with every tool-call id the sanitizer rewrote for the provider given back to the client."""
    if not restore:
        return value
    if isinstance(value, dict):
        return {
            k: restore.get(v, v) if k in _ID_KEYS and isinstance(v, str) else restore_ids(v, restore)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [restore_ids(v, restore) for v in value]
    return value


def error_event(api: ClientAPI, status: int, message: str, sequence_number: int = 0) -> bytes:
    """A stream's last event when the provider fails after the answer began, in the client's format.

    ``sequence_number``: the Responses API numbers its events; the error event takes the next number.
    """
    if api == "openai-chat":
        return b"data: " + orjson.dumps({"error": {"message": message, "type": "api_error", "code": status}}) + b"\n\n"
    if api == "openai-responses":
        body: dict[str, Any] = {
            "type": "error",
            "code": str(status),
            "message": message,
            "param": None,
            "sequence_number": sequence_number,
        }
        return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"


async def sse_frames(api: ClientAPI, stream: Any, restore: dict[str, str]) -> AsyncIterator[bytes]:
    """The provider's stream as SSE in the client's format, ids restored, ending as the format ends."""
    if api == "openai-chat":
        async for chunk in stream:
            data = restore_ids(chunk.model_dump(mode="json", exclude_none=True), restore)
            yield b"data: " + orjson.dumps(data) + b"\n\n"
        yield b"data: [DONE]\n\n"
        return
    if api == "openai-responses":
        # OpenAI names each event in its `event:` line too, and ends with response.completed, no [DONE].
        async for event in stream:
            data = restore_ids(event.model_dump(mode="json", exclude_none=True), restore)
            yield b"event: " + str(data.get("type", "message")).encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
        return
    # litellm's Anthropic adapter already yields Anthropic's SSE events, as bytes.
    if not restore:
        async for chunk in stream:
            yield chunk if isinstance(chunk, bytes) else str(chunk).encode()
        return
    pending = b""
    async for chunk in stream:
        pending += chunk if isinstance(chunk, bytes) else str(chunk).encode()
        *events, pending = pending.split(b"\n\n")
        for event in events:
            yield _restore_event(event, restore) + b"\n\n"
    if pending.strip():
        yield _restore_event(pending, restore) + b"\n\n"


def _restore_event(event: bytes, restore: dict[str, str]) -> bytes:
    lines = []
    for line in event.split(b"\n"):
        if line.startswith(b"data:"):
            with contextlib.suppress(orjson.JSONDecodeError):
                line = b"data: " + orjson.dumps(restore_ids(orjson.loads(line[5:]), restore))
        lines.append(line)
    return b"\n".join(lines)


class GatewayStream(StreamedAnswer):
    """litellm's stream, relayed as SSE in the client's format, each event as it comes.

    ``secrets`` are masked out of every event. A provider failing mid-stream gets the format's
    own error event, the honest end once the status line is gone; closing the provider's stream
    (always) stops its connection, and its generation, too.
    """

    def __init__(
        self,
        api: ClientAPI,
        stream: Any,
        restore: dict[str, str],
        *,
        watch: ClientWatch,
        secrets: Secrets,
        on_done: Callable[[Outcome], None] | None = None,
        read_message: MessageReader | None = None,
    ) -> None:
        super().__init__(watch=watch, on_done=on_done)
        self.read_message = read_message
        self.headers = _SSE_HEADERS
        self.api = api
        self.stream = stream
        self.restore = restore
        self.secrets = secrets
        self._events = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        secrets = self.secrets
        async for frame in sse_frames(self.api, self.stream, self.restore):
            self._events += 1
            # A frame is one whole event: no key can straddle two of them.
            yield secrets.mask(frame) if secrets else frame

    def broken(self, error: Exception) -> UpstreamBroke | None:
        failure = _gateway_error(error, self.read_message)
        message = self.secrets.redact_text(failure.message)
        # The outcome, not the message, goes to the log: a provider may quote a key.
        return UpstreamBroke(failure.outcome, error_event(self.api, failure.status, message, self._events))

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await _close(self.stream)


async def _close(stream: Any) -> None:
    close = getattr(stream, "aclose", None)
    if close is None:
        return
    # Closing a half-read provider stream may raise; there is no one left to tell.
    with contextlib.suppress(Exception):
        await close()
