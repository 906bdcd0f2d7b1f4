"""A zero-delay mock of OpenAI Chat and Anthropic Messages, streaming and not, for benchmarks.

Run:  python bench/mock_provider.py --port 9100
Paths: POST /v1/chat/completions, POST /v1/messages (and /v1/messages/count_tokens), GET /v1/models.
A body containing ``"stream": true`` gets a chunked SSE answer; anything else gets one JSON body.
A streamed Chat request that names ``"max_tokens": N`` gets N content chunks paced ``--pace-ms``
apart (default 200: 50 chunks over 10 s; ``"pace_ms": M`` in the body sets it for that request),
each chunk's content the mock's CLOCK_MONOTONIC in
microseconds when it was written (``"content":"t<us>"``), so a client on the same machine can
tell how long each chunk took to reach it.

It is a bare asyncio protocol (HTTP/1.1 keep-alive, content-length or chunked request bodies) with
every answer prebuilt, on uvloop when installed: its own cost per request is a few tens of
microseconds, so what a benchmark measures in front of it is the proxy's cost. Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import time

_OPENAI_JSON = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "42"}, "logprobs": None, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    },
    separators=(",", ":"),
).encode()

_ANTHROPIC_JSON = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-bench",
        "content": [{"type": "text", "text": "42"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
    separators=(",", ":"),
).encode()

_COUNT_TOKENS_JSON = b'{"input_tokens":10}'
_MODELS_JSON = b'{"object":"list","data":[{"id":"gpt-4o","object":"model","created":0,"owned_by":"bench"}]}'


def _sse(events: list[tuple[str | None, object]]) -> list[bytes]:
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
        out.append((f"event: {name}\n" if name else "").encode() + f"data: {text}\n\n".encode())
    return out


def _openai_chunk(delta: dict[str, object], finish: str | None) -> dict[str, object]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


_OPENAI_SSE = _sse(
    [
        (None, _openai_chunk({"role": "assistant", "content": ""}, None)),
        (None, _openai_chunk({"content": "4"}, None)),
        (None, _openai_chunk({"content": "2"}, None)),
        (None, _openai_chunk({}, "stop")),
        (None, "[DONE]"),
    ]
)

_ANTHROPIC_SSE = _sse(
    [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bench",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-bench",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "4"}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "2"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)


def _json_response(body: bytes, status: bytes = b"200 OK") -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\nx-request-id: req_bench\r\n\r\n"
        + body
    )


def _sse_response(events: list[bytes]) -> list[bytes]:
    # One chunked frame per event, each written on its own, as a provider flushes them.
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    frames = [b"%x\r\n%s\r\n" % (len(e), e) for e in events]
    return [head + frames[0], *frames[1:], b"0\r\n\r\n"]


_ANSWERS: dict[tuple[bytes, bool], list[bytes]] = {
    (b"openai", False): [_json_response(_OPENAI_JSON)],
    (b"openai", True): _sse_response(_OPENAI_SSE),
    (b"anthropic", False): [_json_response(_ANTHROPIC_JSON)],
    (b"anthropic", True): _sse_response(_ANTHROPIC_SSE),
    (b"count_tokens", False): [_json_response(_COUNT_TOKENS_JSON)],
    (b"models", False): [_json_response(_MODELS_JSON)],
}
_NOT_FOUND = _json_response(b'{"error":{"message":"not found"}}', b"404 Not Found")


def _kind(path: bytes) -> bytes | None:
    path = path.split(b"?", 1)[0]
    if path.endswith(b"/chat/completions"):
        return b"openai"
    if path.endswith(b"/messages/count_tokens"):
        return b"count_tokens"
    if path.endswith(b"/messages"):
        return b"anthropic"
    if path.endswith(b"/models"):
        return b"models"
    return None


_MAX_TOKENS = re.compile(rb'"max_tokens":\s*(\d+)')
_PACE_MS = re.compile(rb'"pace_ms":\s*(\d+)')
PACE_S = 0.2


def paced_chunk(i: int) -> bytes:
    """The i-th chunk of a paced stream, stamped with the time it is written (microseconds)."""
    stamp = f"t{time.monotonic_ns() // 1000}"
    event = _sse([(None, _openai_chunk({"content": stamp} if i else {"role": "assistant", "content": stamp}, None))])
    return b"%x\r\n%s\r\n" % (len(event[0]), event[0])


_PACED_TAIL = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in _OPENAI_SSE[-2:]) + b"0\r\n\r\n"
_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        # The parsed head of the request being received: a body of megabytes arrives in many
        # reads, and finding the head again in each would cost the mock more than the proxy.
        self.head: tuple[bytes, bytes, int, bool, bool, int] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while self._one_request():
            pass

    def _parse_head(self) -> bool:
        buf = self.buffer
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return False
        lines = bytes(buf[:end]).split(b"\r\n")
        method, path, _ = lines[0].split(b" ", 2)
        length, chunked, close = 0, False, False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        self.head = (method, path, length, chunked, close, end + 4)
        return True

    def _one_request(self) -> bool:
        if self.head is None and not self._parse_head():
            return False
        assert self.head is not None
        buf = self.buffer
        method, path, length, chunked, close, start = self.head
        if chunked:
            body, consumed = self._dechunk(start)
            if body is None:
                return False
        else:
            if len(buf) < start + length:
                return False
            body, consumed = bytes(buf[start : start + length]), start + length
        del buf[:consumed]
        self.head = None
        self._answer(method, path, body, close)
        return True

    def _dechunk(self, pos: int) -> tuple[bytes | None, int]:
        buf, body = self.buffer, bytearray()
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                return None, 0
            size = int(bytes(buf[pos:eol]).split(b";")[0], 16)
            pos = eol + 2
            if size == 0:
                end = buf.find(b"\r\n\r\n", pos - 2)  # no trailers expected: the closing CRLF
                return (bytes(body), end + 4) if end >= 0 else (None, 0)
            if len(buf) < pos + size + 2:
                return None, 0
            body += buf[pos : pos + size]
            pos += size + 2

    def _answer(self, method: bytes, path: bytes, body: bytes, close: bool) -> None:
        assert self.transport is not None
        kind = _kind(path)
        stream = b'"stream":true' in body or b'"stream": true' in body
        paced = _MAX_TOKENS.search(body) if stream and kind == b"openai" else None
        if paced:
            pace = _PACE_MS.search(body)
            pace_s = int(pace.group(1)) / 1000 if pace else PACE_S
            asyncio.get_running_loop().create_task(self._paced(int(paced.group(1)), pace_s, close))
            return
        answer = _ANSWERS.get((kind, stream and kind in (b"openai", b"anthropic"))) if kind else None
        for part in answer or [_NOT_FOUND]:
            self.transport.write(part)
        if close:
            self.transport.close()

    async def _paced(self, chunks: int, pace_s: float, close: bool) -> None:
        assert self.transport is not None
        self.transport.write(_SSE_HEAD + paced_chunk(0))
        for i in range(1, chunks):
            await asyncio.sleep(pace_s)
            if self.transport.is_closing():
                return
            self.transport.write(paced_chunk(i))
        self.transport.write(_PACED_TAIL)
        if close:
            self.transport.close()


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_Connection, host, port, backlog=1024, reuse_address=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    print(f"mock provider listening on http://{host}:{port}", flush=True)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--pace-ms", type=float, default=200.0, help="between the chunks of a paced stream")
    args = parser.parse_args()
    global PACE_S
    PACE_S = args.pace_ms / 1000
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args.host, args.port))
    else:
        uvloop.run(serve(args.host, args.port))


if __name__ == "__main__":
    main()
