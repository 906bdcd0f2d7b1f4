"""Trailers of a chunked answer: never relayed (the relay de-chunks the body), and those RFC 9110
§6.5.1 keeps out of trailers (framing, routing, the content's format) are dropped with a warning
rather than failing the answer. A ``Content-Length`` trailer is the case that broke: llhttp reads
trailers with its header state machine, where one collides with the chunked framing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_asyncio_server

COMPLETION = orjson.dumps(
    {
        "id": "chatcmpl-trailers",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 3000}, "finish_reason": "stop"}],
    }
)
WARNING_EVENT = "upstream sent trailer fields RFC 9110 forbids in trailers; dropped"
EVENTS = [b'data: {"i": %d, "padding": "%s"}\n\n' % (i, b"y" * 500) for i in range(6)] + [b"data: [DONE]\n\n"]


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


@pytest.fixture
def trailing_upstream(request: pytest.FixtureRequest) -> Iterator[str]:
    """A raw HTTP/1.1 upstream answering every request chunked, its trailer section holding
    ``request.param``; SSE when the request asks to stream, else one JSON completion."""
    trailers: bytes = request.param

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                body = await reader.readexactly(length)
                stream = b'"stream":true' in body.replace(b" ", b"")
                pieces = EVENTS if stream else [COMPLETION[:1000], COMPLETION[1000:]]
                kind = b"text/event-stream" if stream else b"application/json"
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: " + kind + b"\r\ntransfer-encoding: chunked\r\n\r\n")
                for piece in pieces:
                    writer.write(_chunk(piece))
                    await writer.drain()
                writer.write(b"0\r\n" + trailers + b"\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    with running_asyncio_server(serve) as url:
        yield url


FORBIDDEN = [
    pytest.param(b"Content-Length: 5\r\n", ["content-length"], id="content-length"),
    pytest.param(
        b"X-Checksum: abc\r\nContent-Length: 99999\r\n", ["content-length"], id="content-length-after-another"
    ),
    pytest.param(
        b"Transfer-Encoding: chunked\r\nHost: elsewhere\r\nContent-Type: text/plain\r\n",
        ["transfer-encoding", "host", "content-type"],
        id="framing-routing-format",
    ),
]


@pytest.mark.parametrize(("trailing_upstream", "dropped"), FORBIDDEN, indirect=["trailing_upstream"])
def test_a_forbidden_trailer_is_dropped_and_the_whole_body_relayed(
    trailing_upstream: str, dropped: list[str], logs: LogLines
) -> None:
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    with (
        suture(openai={"upstream": trailing_upstream + "/v1"}) as url,
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        whole = client.post("/v1/chat/completions", json=chat)
        with client.stream("POST", "/v1/chat/completions", json={**chat, "stream": True}) as streamed:
            events = b"".join(streamed.iter_bytes())
        again = client.post("/v1/chat/completions", json=chat)  # the connection (or a new one) still serves
        warned = wait_for(lambda: len(logs.records("suture.upstream", event=WARNING_EVENT)) >= 3)
    assert (whole.status_code, whole.content) == (200, COMPLETION)
    assert (streamed.status_code, events) == (200, b"".join(EVENTS))
    assert (again.status_code, again.content) == (200, COMPLETION)
    assert warned
    assert [line["trailers"] for line in logs.records("suture.upstream", event=WARNING_EVENT)] == [dropped] * 3
    assert not [a for a in logs.records("suture.access", "request") if a["outcome"] != "complete"]


@pytest.mark.parametrize("trailing_upstream", [b"X-Checksum: abc\r\n"], indirect=True)
def test_an_allowed_trailer_is_dropped_quietly(trailing_upstream: str, logs: LogLines) -> None:
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    with (
        suture(openai={"upstream": trailing_upstream + "/v1"}) as url,
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        assert client.post("/v1/chat/completions", json=chat).content == COMPLETION
    assert not logs.records("suture.upstream", event=WARNING_EVENT)
