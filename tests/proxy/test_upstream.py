"""Unit tests of the httpx layer: respx stands in for the transport in the tests of ``Upstream``
(given as its ``transport``); the aiohttp transport itself is tested against a loopback server."""

from __future__ import annotations

from typing import Any

import aiohttp
import anyio
import httpx
import pytest
import respx
from starlette.types import Receive, Scope, Send

from proxy.settings import TimeoutSettings
from proxy.upstream import (
    AiohttpTransport,
    Upstream,
    UpstreamError,
    UpstreamTimeout,
    _httpx_error,
    forward_headers,
    relay_headers,
)
from tests.servers import running_server

BASE = "https://upstream.test/v1"


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


def test_relay_headers_drop_hop_by_hop_and_mark_sse_unbuffered() -> None:
    response = httpx.Response(
        200,
        headers=h(
            ("content-type", "text/event-stream"),
            ("transfer-encoding", "chunked"),
            ("date", "x"),
            ("cache-control", "no-store"),
            ("x-request-id", "up-1"),
            ("set-cookie", "a=b"),
        ),
    )
    assert relay_headers(response) == h(
        ("content-type", "text/event-stream"),
        ("x-request-id", "up-1"),
        ("set-cookie", "a=b"),
        ("cache-control", "no-cache"),
        ("x-accel-buffering", "no"),
    )


def make(router: respx.Router, **timeouts: float) -> Upstream:
    return Upstream("openai", BASE + "/", timeouts=TimeoutSettings(**timeouts), transport=httpx.MockTransport(router.async_handler))


async def _open(upstream: Upstream, path: str, **kwargs: object) -> httpx.Response:
    response = await upstream.open("POST", path, headers=[], content=b"{}", **kwargs)  # type: ignore[arg-type]
    await response.aread()
    await response.aclose()
    return response


def test_open_targets_base_url_plus_fixed_path_and_adds_no_headers() -> None:
    router = respx.Router(assert_all_mocked=True)
    route = router.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(200, headers={"set-cookie": "session=alice; Path=/"}, json={})
    )

    async def run() -> None:
        upstream = make(router)
        try:
            await _open(upstream, "/chat/completions", query=b"a=1")
            await _open(upstream, "/chat/completions")
        finally:
            await upstream.aclose()
        assert upstream.closed

    anyio.run(run)
    first, second = (call.request for call in route.calls)
    assert str(first.url) == f"{BASE}/chat/completions?a=1"
    assert "cookie" not in second.headers
    # httpx's own defaults do not stand in for the client's headers
    assert "user-agent" not in first.headers
    assert "accept-encoding" not in first.headers


@pytest.mark.parametrize(
    ("exc", "expected", "status"),
    [
        (httpx.ConnectError("refused"), UpstreamError, 502),
        (httpx.RemoteProtocolError("closed"), UpstreamError, 502),
        (httpx.ConnectTimeout("slow"), UpstreamTimeout, 504),
        (httpx.ReadTimeout("slow"), UpstreamTimeout, 504),
    ],
)
def test_transport_failures_map_to_502_and_504(exc: Exception, expected: type, status: int) -> None:
    router = respx.Router(assert_all_mocked=True)
    router.post(f"{BASE}/chat/completions").mock(side_effect=exc)

    async def run() -> None:
        upstream = make(router)
        try:
            with pytest.raises(expected) as info:
                await _open(upstream, "/chat/completions")
        finally:
            await upstream.aclose()
        assert type(info.value) is expected
        assert info.value.status == status
        assert BASE in info.value.describe()

    anyio.run(run)


class Recorder:
    """A loopback upstream that records each request and answers in three chunks with a cookie."""

    def __init__(self) -> None:
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
            {"method": scope["method"], "path": scope["raw_path"], "query": scope["query_string"],
             "headers": scope["headers"], "body": body}
        )
        headers = [(b"content-type", b"text/event-stream"), (b"set-cookie", b"session=alice; Path=/")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for part in (b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def test_aiohttp_transport_sends_the_request_as_built_and_relays_the_raw_body() -> None:
    recorder = Recorder()
    with running_server(recorder) as base:

        async def run() -> list[bytes]:
            upstream = Upstream("bedrock", base, timeouts=TimeoutSettings())
            try:
                headers = h(("X-Custom", "a"), ("Authorization", "Bearer k"), ("X-Custom", "b"))
                response = await upstream.open(
                    "POST", "/model/a%3Ab/converse", query=b"x=1", headers=headers, content=b'{"a":1}'
                )
                assert response.status_code == 200
                chunks = [chunk async for chunk in response.aiter_raw()]
                await response.aclose()
                second = await upstream.open("GET", "/v1/models", headers=[])
                await second.aread()
                await second.aclose()
                return chunks
            finally:
                await upstream.aclose()

        chunks = anyio.run(run)
    assert b"".join(chunks) == b"data: 1\n\ndata: 2\n\ndata: 3\n\n"
    first, second = recorder.requests
    # The path exactly as encoded (a SigV4 signature covers it), the body and the headers as given:
    # in order, duplicates kept, and no user-agent, accept, accept-encoding or content-type added.
    assert (first["method"], first["path"], first["query"], first["body"]) == (
        "POST", b"/model/a%3Ab/converse", b"x=1", b'{"a":1}'
    )
    sent = [(n, v) for n, v in first["headers"] if n not in (b"host", b"content-length", b"connection")]
    assert sent == h(("x-custom", "a"), ("authorization", "Bearer k"), ("x-custom", "b"))
    # The upstream's cookie was not stored, so it is not sent back.
    assert [n for n, _ in second["headers"] if n != b"connection"] == [b"host"]


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (aiohttp.ConnectionTimeoutError("slow connect"), httpx.ConnectTimeout),
        (aiohttp.SocketTimeoutError("slow read"), httpx.ReadTimeout),
        (aiohttp.ServerDisconnectedError(), httpx.RemoteProtocolError),
        (aiohttp.ClientPayloadError("cut"), httpx.RemoteProtocolError),
        (aiohttp.ClientOSError(104, "reset"), httpx.ReadError),
        (TimeoutError(), httpx.PoolTimeout),
    ],
)
def test_aiohttp_errors_become_the_httpx_errors_upstream_maps(exc: Exception, expected: type) -> None:
    request = httpx.Request("POST", "http://upstream.test/v1/chat/completions")
    mapped = _httpx_error(exc, request)
    assert type(mapped) is expected
    assert isinstance(mapped, httpx.RequestError) and mapped.request is request


def test_aiohttp_transport_refused_connection_is_a_connect_error() -> None:
    from tests.servers import free_port

    async def run() -> None:
        transport = AiohttpTransport(TimeoutSettings(), 1)
        try:
            with pytest.raises(httpx.ConnectError):
                await transport.handle_async_request(httpx.Request("GET", f"http://127.0.0.1:{free_port()}/"))
        finally:
            await transport.aclose()

    anyio.run(run)


def test_unexpected_errors_are_not_disguised() -> None:
    exc = ValueError("a bug")
    assert _httpx_error(exc, httpx.Request("GET", "http://x/")) is exc
