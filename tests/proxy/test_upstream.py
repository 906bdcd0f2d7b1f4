"""Unit tests of the httpx layer (respx stands in for the network here only)."""

from __future__ import annotations

import anyio
import httpx
import pytest
import respx

from proxy.settings import TimeoutSettings
from proxy.upstream import Upstream, UpstreamError, UpstreamTimeout, forward_headers, relay_headers

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


def make(**timeouts: float) -> Upstream:
    return Upstream("openai", BASE + "/", timeouts=TimeoutSettings(**timeouts))


async def _open(upstream: Upstream, path: str, **kwargs: object) -> httpx.Response:
    response = await upstream.open("POST", path, headers=[], content=b"{}", **kwargs)  # type: ignore[arg-type]
    await response.aread()
    await response.aclose()
    return response


@respx.mock
def test_open_targets_base_url_plus_fixed_path_and_stores_no_cookies() -> None:
    route = respx.post(f"{BASE}/chat/completions").mock(
        return_value=httpx.Response(200, headers={"set-cookie": "session=alice; Path=/"}, json={})
    )

    async def run() -> None:
        upstream = make()
        try:
            await _open(upstream, "/chat/completions", query=b"a=1")
            await _open(upstream, "/chat/completions")
            assert len(upstream.client.cookies.jar) == 0
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
@respx.mock
def test_transport_failures_map_to_502_and_504(exc: Exception, expected: type, status: int) -> None:
    respx.post(f"{BASE}/chat/completions").mock(side_effect=exc)

    async def run() -> None:
        upstream = make()
        try:
            with pytest.raises(expected) as info:
                await _open(upstream, "/chat/completions")
        finally:
            await upstream.aclose()
        assert type(info.value) is expected
        assert info.value.status == status
        assert BASE in info.value.describe()

    anyio.run(run)
