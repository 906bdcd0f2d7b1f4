"""Unit tests of ``proxy/upstream.py``: the header rules, and ``Upstream`` against real loopback
upstreams (uvicorn for well-formed answers, a raw socket server for malformed ones). The
connection pool underneath is tested byte by byte in test_http1."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from proxy.upstreams.native import (
    Timeouts,
    Upstream,
    UpstreamError,
    UpstreamSigningError,
    UpstreamTimeout,
    forward_headers,
    relay_headers,
)
from tests._support.servers import free_port, running_server


def h(*pairs: tuple[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in pairs]


def test_forward_headers_drop_hop_by_hop_and_keep_the_rest_as_is() -> None:
    client = h(
        ("Host", "evil.example"),
        ("Connection", "keep-alive, X-Secret-Hop"),
        ("X-Secret-Hop", "1"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "12"),
        ("TE", "trailers"),
        ("Authorization", "Bearer sk-client"),
        ("OpenAI-Organization", "org-1"),
        ("X-Custom", "a"),
        ("X-Custom", "b"),
        ("X-Forwarded-Host", "evil.example"),
    )
    out = forward_headers(client)
    assert out == h(
        ("Authorization", "Bearer sk-client"),
        ("OpenAI-Organization", "org-1"),
        ("X-Custom", "a"),
        ("X-Custom", "b"),
        ("X-Forwarded-Host", "evil.example"),
        ("accept-encoding", "identity"),
    )


def test_forward_headers_keep_the_clients_accept_encoding_and_apply_credentials() -> None:
    client = h(("accept-encoding", "gzip"), ("authorization", "Bearer proxy-key"), ("x-api-key", "k"))
    out = forward_headers(client, drop={"authorization"}, replace={"X-Api-Key": "sk-upstream"})
    assert out == h(("accept-encoding", "gzip"), ("x-api-key", "sk-upstream"))


@contextlib.asynccontextmanager
async def raw_upstream(answer: bytes, *, then_close: bool = False) -> AsyncIterator[str]:
    """A loopback upstream in the running loop that answers every request with exactly ``answer``."""
    writers: list[asyncio.StreamWriter] = []
    handlers: list[asyncio.Task[Any]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        writers.append(writer)
        handlers.append(task)
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
            while not then_close and await reader.read(65536):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        for writer in writers:
            writer.transport.abort()
        await asyncio.gather(*handlers)
        await server.wait_closed()


def test_relay_headers_drop_hop_by_hop_and_mark_sse_unbuffered() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: text/event-stream\r\n"
        b"Transfer-Encoding: chunked\r\n"
        b"Connection: keep-alive, X-Hop\r\n"
        b"X-Hop: 1\r\n"
        b"Date: Mon, 30 Nov 2026 00:00:00 GMT\r\n"
        b"Cache-Control: no-store\r\n"
        b"X-Request-Id: up-1\r\n"
        b"X-Suture-Repairs: 9\r\n"
        b"X-Suture-Request-Id: another-suture\r\n"
        b"Set-Cookie: a=b\r\n"
        b"Set-Cookie: c=d\r\n"
        b"\r\n0\r\n\r\n"
    )

    async def run() -> list[tuple[bytes, bytes]]:
        async with raw_upstream(answer) as base:
            upstream = Upstream("openai", base, timeouts=Timeouts())
            response = await upstream.open("POST", "/v1/chat/completions", headers=[], content=b"{}")
            try:
                return relay_headers(response)
            finally:
                await response.aclose()
                await upstream.aclose()

    # Names keep the upstream's case; duplicates stay. The upstream's request id passes as it
    # came (support asks for it); x-suture-* it claims (another Suture's) are not relayed.
    assert anyio.run(run) == [
        (b"Content-Type", b"text/event-stream"),
        (b"X-Request-Id", b"up-1"),
        (b"Set-Cookie", b"a=b"),
        (b"Set-Cookie", b"c=d"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]


def test_relay_headers_leave_a_json_answer_unmarked() -> None:
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nContent-Length: 2\r\n\r\n{}"
    )

    async def run() -> list[tuple[bytes, bytes]]:
        async with raw_upstream(answer) as base:
            upstream = Upstream("openai", base, timeouts=Timeouts())
            response = await upstream.open("GET", "/v1/models", headers=[])
            try:
                assert await response.aread() == b"{}"
                return relay_headers(response)
            finally:
                await response.aclose()
                await upstream.aclose()

    assert anyio.run(run) == h(
        ("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("Content-Length", "2")
    )


class Recorder:
    """A loopback upstream that records each request and answers in three chunks with a cookie.

    ``stall`` makes it read the request and never answer (until the client goes).
    """

    def __init__(self, stall: bool = False) -> None:
        self.stall = stall
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests.append(
            {
                "method": scope["method"],
                "path": scope["raw_path"],
                "query": scope["query_string"],
                "headers": scope["headers"],
                "body": body,
            }
        )
        if self.stall:
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        headers = [(b"content-type", b"text/event-stream"), (b"set-cookie", b"session=alice; Path=/")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for part in (b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def test_open_sends_the_request_as_built_to_base_url_plus_path() -> None:
    recorder = Recorder()
    with running_server(recorder) as base:

        async def run() -> list[bytes]:
            upstream = Upstream("openai", base + "/v1/", timeouts=Timeouts())
            try:
                headers = h(("X-Custom", "a"), ("Authorization", "Bearer k"), ("X-Custom", "b"))
                response = await upstream.open(
                    "POST", "/chat/completions", query=b"a=1&b=%2F", headers=headers, content=b'{"a":1}'
                )
                assert response.status_code == 200
                chunks = [chunk async for chunk in response.aiter_raw()]
                await response.aclose()
                second = await upstream.open("GET", "/models", headers=[])
                await second.aread()
                await second.aclose()
            finally:
                await upstream.aclose()
            assert upstream.closed
            with pytest.raises(RuntimeError, match="closed"):
                await upstream.open("GET", "/models", headers=[])
            return chunks

        chunks = anyio.run(run)
    assert b"".join(chunks) == b"data: 1\n\ndata: 2\n\ndata: 3\n\n"
    first, second = recorder.requests
    host = (b"host", base.removeprefix("http://").encode())
    assert (first["method"], first["path"], first["query"], first["body"]) == (
        "POST",
        b"/v1/chat/completions",
        b"a=1&b=%2F",
        b'{"a":1}',
    )
    # The headers as given: in order, duplicates kept, and nothing added but Host and
    # Content-Length (no user-agent, accept, accept-encoding, content-type or connection).
    assert first["headers"] == [
        host,
        *h(("x-custom", "a"), ("authorization", "Bearer k"), ("x-custom", "b")),
        (b"content-length", b"7"),
    ]
    # The upstream's cookie was not stored, so it is not sent back.
    assert (second["method"], second["path"], second["headers"]) == ("GET", b"/v1/models", [host])


def test_a_bedrock_path_goes_byte_identical_and_is_signed_as_sent() -> None:
    recorder = Recorder()
    signed: list[tuple[str, str, list[tuple[bytes, bytes]], bytes]] = []

    async def sign(method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes) -> list[tuple[bytes, bytes]]:
        signed.append((method, url, headers, body))
        return h(("x-amz-date", "20261130T000000Z"), ("authorization", "AWS4-HMAC-SHA256 Signature=abc"))

    with running_server(recorder) as base:

        async def run() -> None:
            upstream = Upstream("bedrock", base, timeouts=Timeouts(), sign=sign)
            try:
                response = await upstream.open(
                    "POST", "/model/a%3Ab/converse", headers=h(("content-type", "application/json")), content=b"{}"
                )
                await response.aread()
                await response.aclose()
            finally:
                await upstream.aclose()

        anyio.run(run)
    [request] = recorder.requests
    assert request["path"] == b"/model/a%3Ab/converse"
    assert signed == [("POST", f"{base}/model/a%3Ab/converse", h(("content-type", "application/json")), b"{}")]
    assert request["headers"][1:] == h(
        ("content-type", "application/json"),
        ("x-amz-date", "20261130T000000Z"),
        ("authorization", "AWS4-HMAC-SHA256 Signature=abc"),
        ("content-length", "2"),
    )


def test_a_signing_failure_is_a_502_and_nothing_is_sent() -> None:
    recorder = Recorder()

    async def sign(method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes) -> list[tuple[bytes, bytes]]:
        raise RuntimeError("no credentials")

    with running_server(recorder) as base:

        async def run() -> None:
            upstream = Upstream("bedrock", base, timeouts=Timeouts(), sign=sign)
            try:
                with pytest.raises(UpstreamSigningError) as info:
                    await upstream.open("POST", "/model/m/converse", headers=[], content=b"{}")
            finally:
                await upstream.aclose()
            assert info.value.status == 502
            assert info.value.describe() == f"Suture could not sign the request for {base} (RuntimeError)"

        anyio.run(run)
    assert recorder.requests == []


def test_a_header_with_a_line_break_is_refused_and_never_sent() -> None:
    recorder = Recorder()
    with running_server(recorder) as base:

        async def run() -> None:
            upstream = Upstream("openai", base, timeouts=Timeouts())
            try:
                with pytest.raises(UpstreamError) as info:
                    await upstream.open(
                        "POST", "/v1/chat/completions", headers=h(("x-api-key", "k\r\nX-Injected: 1")), content=b"{}"
                    )
            finally:
                await upstream.aclose()
            assert (type(info.value), info.value.status) == (UpstreamError, 502)
            assert upstream.pool.connections == 0

        anyio.run(run)
    assert recorder.requests == []


def test_a_refused_connection_is_a_502() -> None:
    base = f"http://127.0.0.1:{free_port()}"

    async def run() -> None:
        upstream = Upstream("openai", base, timeouts=Timeouts())
        try:
            with pytest.raises(UpstreamError) as info:
                await upstream.open("POST", "/v1/chat/completions", headers=[], content=b"{}")
        finally:
            await upstream.aclose()
        assert (type(info.value), info.value.status, info.value.outcome) == (UpstreamError, 502, "unreachable")
        assert info.value.describe() == f"Suture could not reach the upstream {base} (ConnectError)"

    anyio.run(run)


def test_a_host_name_dns_does_not_know_is_a_502_that_says_so() -> None:
    base = "http://api.exampel.invalid"  # RFC 2606: .invalid never resolves

    async def run() -> None:
        upstream = Upstream("openai", base, timeouts=Timeouts())
        try:
            with pytest.raises(UpstreamError) as info:
                await upstream.open("POST", "/v1/chat/completions", headers=[], content=b"{}")
        finally:
            await upstream.aclose()
        assert (info.value.status, info.value.outcome) == (502, "unreachable")
        assert info.value.describe().startswith(
            f"Suture could not reach the upstream {base} (NameNotResolved: the host name api.exampel.invalid "
            "could not be resolved (DNS"
        )

    anyio.run(run)


def test_no_answer_within_the_read_timeout_is_a_504() -> None:
    recorder = Recorder(stall=True)
    with running_server(recorder) as base:

        async def run() -> None:
            upstream = Upstream("openai", base, timeouts=Timeouts(read=0.2))
            try:
                with pytest.raises(UpstreamTimeout) as info:
                    await upstream.open("POST", "/v1/chat/completions", headers=[], content=b"{}")
            finally:
                await upstream.aclose()
            assert (info.value.status, info.value.outcome) == (504, "timeout")
            assert info.value.describe() == f"the upstream {base} did not answer in time (ReadTimeout)"

        anyio.run(run)
    assert len(recorder.requests) == 1


@pytest.mark.parametrize(
    "answer",
    [b"garbage\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", b""],
    ids=["not-http", "two-lengths", "closed"],
)
def test_a_malformed_answer_is_a_502(answer: bytes) -> None:
    async def run() -> None:
        async with raw_upstream(answer, then_close=True) as base:
            upstream = Upstream("openai", base, timeouts=Timeouts(read=5))
            try:
                with pytest.raises(UpstreamError) as info:
                    await upstream.open("POST", "/v1/chat/completions", headers=[], content=b"{}")
            finally:
                await upstream.aclose()
            assert (type(info.value), info.value.status) == (UpstreamError, 502)
            assert info.value.describe() == f"Suture could not reach the upstream {base} (RemoteProtocolError)"

    anyio.run(run)
