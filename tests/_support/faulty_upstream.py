"""A fault-injecting upstream: a raw asyncio HTTP/1.1 server on loopback that misbehaves on request.

Raw sockets, not an ASGI app, so a fault can be placed at the byte level: headers that never
come, a body cut short of its ``content-length``, a stream cut mid-event, a keep-alive
connection closed behind the client's back. The client picks the fault per request with an
``x-fault`` header (Suture forwards client headers), or a test queues faults in ``plan``.

Faults: ``ok`` (default; JSON, or SSE when the body asks to stream), ``slow-headers:<s>``,
``cut-body``, ``cut-stream``, ``bad-sse``, ``status:<code>[:<retry-after>]`` (429 defaults to 7),
``close-after`` (answers, then closes the idle keep-alive connection), ``redirect:<base>`` (a 307
to the same path on another host), ``echo-key`` (a 401 that quotes the client's key; ``echo-key-stream``, ``-header``, ``-gzip``: in an SSE
error event split across chunks, in a header, in a gzip body), ``slow-stream:<n>:<s>``
(n more text events, s seconds apart; a stream the client abandons is counted in ``cancelled``).
A transcript that still holds the unanswered call ``call_orphan`` gets a 400, as a provider would.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson

from tests._support.servers import running_asyncio_server

ORPHAN = "call_orphan"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int


@dataclass
class FaultyUpstream:
    plan: list[str] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    connections_opened: int = 0
    open_connections: int = 0
    cancelled: int = 0
    completed_streams: int = 0
    url: str = ""
    port: int = 0

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve on 127.0.0.1 in a background thread; yield the base URL."""
        with running_asyncio_server(self._connection, port=self.port) as url:
            self.url = url
            yield url

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections_opened += 1
        self.open_connections += 1
        number = self.connections_opened
        try:
            while True:
                request = await _read_request(reader, number)
                if request is None:
                    return
                self.seen.append(request)
                fault = self.plan.pop(0) if self.plan else request.headers.get("x-fault", "ok")
                if not await self._answer(fault, request, reader, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            return  # the server is stopping; ending quietly keeps asyncio from logging the cancel
        finally:
            self.open_connections -= 1
            writer.close()

    async def _answer(
        self, fault: str, request: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Write one answer; False when the connection must close afterwards."""
        name, _, arg = fault.partition(":")
        anthropic = request.path.startswith("/v1/messages")
        wants_stream = b'"stream":true' in request.body.replace(b" ", b"")
        if name == "slow-headers":
            await asyncio.sleep(float(arg))
            name = "ok"
        if name == "status":
            code_text, _, retry_after = arg.partition(":")
            code = int(code_text)
            retry_after = retry_after or ("7" if code == 429 else "")
            extra = {"retry-after": retry_after} if retry_after else {}
            body = orjson.dumps({"error": {"message": f"upstream says {code}", "type": "upstream_error"}})
            writer.write(_head(code, {"content-type": "application/json", "content-length": str(len(body)), **extra}))
            writer.write(body)
            await writer.drain()
            return True
        if name == "redirect":
            writer.write(_head(307, {"location": arg + request.path, "content-length": "0"}))
            await writer.drain()
            return True
        if name == "echo-key":
            # As OpenAI does: "Incorrect API key provided: sk-...". The client may see its own key;
            # Suture's logs, captures and metrics must not.
            key = request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
            body = orjson.dumps({"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid"}})
            writer.write(_head(401, {"content-type": "application/json", "content-length": str(len(body))}))
            writer.write(body)
            await writer.drain()
            return True
        if name in ("echo-key-stream", "echo-key-header", "echo-key-gzip"):
            return await self._echo_key(name, request, writer)
        if name == "cut-body":
            writer.write(_head(200, {"content-type": "application/json", "content-length": "500"}))
            writer.write(b'{"id": "cut", "choices": [')
            await writer.drain()
            return False
        if name in ("cut-stream", "bad-sse", "slow-stream") or (name == "ok" and wants_stream):
            return await self._stream(name, arg, anthropic, reader, writer)
        if ORPHAN.encode() in request.body and not _answered(request.body):
            body = orjson.dumps({"error": {"message": f"tool call {ORPHAN} has no result", "type": "invalid"}})
            writer.write(_head(400, {"content-type": "application/json", "content-length": str(len(body))}))
            writer.write(body)
            await writer.drain()
            return True
        body = orjson.dumps(_anthropic_message() if anthropic else _openai_completion())
        writer.write(_head(200, {"content-type": "application/json", "content-length": str(len(body))}))
        writer.write(body)
        await writer.drain()
        if name == "close-after":
            await asyncio.sleep(0.05)
            return False
        return True

    async def _echo_key(self, name: str, request: Seen, writer: asyncio.StreamWriter) -> bool:
        """The key this request carried, quoted back where a relay must find it: in an SSE error event
        split across two chunks, in a response header, or in a gzip body sent although Suture asked
        for identity."""
        key = request.headers.get("authorization", "").removeprefix("Bearer ") or request.headers.get("x-api-key", "")
        if name == "echo-key-stream":
            event = _sse({"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid"}})
            cut = event.index(key.encode()) + len(key) // 2
            writer.write(_head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
            writer.write(_chunk(event[:cut]))
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(_chunk(event[cut:]) + b"0\r\n\r\n")
        elif name == "echo-key-header":
            body = b'{"error": {"message": "denied"}}'
            writer.write(
                _head(403, {"x-debug-key": key, "content-type": "application/json", "content-length": str(len(body))})
            )
            writer.write(body)
        else:
            body = gzip.compress(orjson.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}))
            headers = {"content-type": "application/json", "content-encoding": "gzip", "content-length": str(len(body))}
            writer.write(_head(401, headers))
            writer.write(body)
        await writer.drain()
        return True

    async def _stream(
        self, name: str, arg: str, anthropic: bool, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        events = _anthropic_events() if anthropic else _openai_events()
        writer.write(_head(200, {"content-type": "text/event-stream", "transfer-encoding": "chunked"}))
        if name == "cut-stream":
            writer.write(_chunk(events[0]) + _chunk(events[1][: len(events[1]) // 2]))
            await writer.drain()
            return False  # no terminating chunk: the stream stops mid-event
        if name == "bad-sse":
            # Named, so the Anthropic SDK parses it rather than skipping an unknown event.
            broken = (b"event: content_block_delta\n" if anthropic else b"") + b'data: {"delta": {"text": "x"\n\n'
            events = [*events[:2], broken, *events[-1:]]
        delay, count = 0.0, len(events)
        if name == "slow-stream":
            n, _, seconds = arg.partition(":")
            count, delay = int(n), float(seconds)
            events = events[:2] + [events[2]] * count + events[2:]
        gone = asyncio.ensure_future(reader.read(1))  # EOF (b"") when the client closes
        try:
            for event in events:
                if gone.done():
                    self.cancelled += 1
                    return False
                writer.write(_chunk(event))
                await writer.drain()
                if delay:
                    await asyncio.wait([gone], timeout=delay)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            self.completed_streams += 1
        except ConnectionError:
            self.cancelled += 1
            return False
        finally:
            if not gone.done():
                gone.cancel()
        return True


def _answered(body: bytes) -> bool:
    compact = body.replace(b" ", b"")
    return f'"tool_call_id":"{ORPHAN}"'.encode() in compact or f'"tool_use_id":"{ORPHAN}"'.encode() in compact


async def _read_request(reader: asyncio.StreamReader, connection: int) -> Seen | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return Seen(method, path, headers, body, connection)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _sse(data: object, event: str | None = None) -> bytes:
    prefix = f"event: {event}\n".encode() if event else b""
    return prefix + b"data: " + orjson.dumps(data) + b"\n\n"


def _openai_completion() -> dict[str, object]:
    return {
        "id": "chatcmpl-faulty",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _openai_events() -> list[bytes]:
    def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse(
            {
                "id": "chatcmpl-faulty",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "gpt-4o-mini",
                "choices": [choice],
            }
        )

    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "hello "}),
        chunk({"content": "world"}),
        chunk({}, "stop"),
        b"data: [DONE]\n\n",
    ]


def _anthropic_message() -> dict[str, object]:
    return {
        "id": "msg_faulty",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _anthropic_events() -> list[bytes]:
    start = {**_anthropic_message(), "content": [], "stop_reason": None}
    return [
        _sse({"type": "message_start", "message": start}, "message_start"),
        _sse(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        ),
        _sse(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi "}},
            "content_block_delta",
        ),
        _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
            "message_delta",
        ),
        _sse({"type": "message_stop"}, "message_stop"),
    ]
