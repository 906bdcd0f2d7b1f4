"""Upstream faults, injected at the byte level: each gives the client a well-formed, provider-shaped
error with the request id (or the upstream's own answer, relayed as is); a broken stream makes the
official SDKs raise rather than hang; and the pool recovers, so the next request succeeds."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests._support.faulty_upstream import FaultyUpstream
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import free_port

try:  # newer anthropic SDKs run on httpx2, whose errors are their own classes
    from httpx2 import TransportError as SdkTransportError
except ImportError:  # pragma: no cover
    from httpx import TransportError as SdkTransportError

# A cut stream surfaces as the SDK's connection error (or its transport's); malformed SSE as a
# JSON error from the SDK's event parser. Either way the SDK raises; it does not hang or finish.
SDK_ERRORS = (openai.APIError, anthropic.APIError, httpx.TransportError, SdkTransportError, json.JSONDecodeError)

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json"}


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


@pytest.fixture
def proxy(faulty: FaultyUpstream) -> Iterator[str]:
    with suture(
        openai={"upstream": faulty.url + "/v1"},
        anthropic={"upstream": faulty.url},
        timeouts={"connect": 0.5, "read": 0.5},
    ) as base:
        yield base


def _error_message(route: str, response: httpx.Response) -> str:
    body = response.json()
    if route == OPENAI:
        assert set(body) == {"error"} and body["error"]["type"]
    else:
        assert body["type"] == "error" and body["error"]["type"]
    message: str = body["error"]["message"]
    return message


def _post(base: str, route: str, fault: str | None = None, **extra: Any) -> httpx.Response:
    body = CHAT if route == OPENAI else MESSAGES
    headers = {**ANTHROPIC_HEADERS, "x-request-id": f"fault-{fault or 'none'}"}
    if fault:
        headers["x-fault"] = fault
    with httpx.Client(timeout=10) as client:
        return client.post(base + route, json={**body, **extra}, headers=headers)


def _recovers(base: str, route: str) -> None:
    ok = _post(base, route)
    assert ok.status_code == 200, ok.text
    assert ok.json()["id"] in ("chatcmpl-faulty", "msg_faulty")


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_unreachable_upstreams_are_a_provider_shaped_502(route: str, logs: LogLines) -> None:
    refused = f"http://127.0.0.1:{free_port()}"
    for dead in (refused, "http://nonexistent.invalid"):
        with suture(openai={"upstream": dead + "/v1"}, anthropic={"upstream": dead}, timeouts={"connect": 2}) as base:
            response = _post(base, route)
            assert response.status_code == 502, response.text
            assert response.headers["x-suture-request-id"] == "fault-none"
            message = _error_message(route, response)
            assert dead in message and "could not reach" in message
            if dead == refused:
                assert "ConnectError" in message
            else:
                assert "the host name nonexistent.invalid could not be resolved (DNS" in message


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_connect_timeout_is_a_504(route: str) -> None:
    # A listening socket that never accepts, its backlog filled: the SYN of the next connection is
    # never answered, so connecting times out, all on loopback.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.1)
        dead = f"http://127.0.0.1:{port}"
        try:
            with suture(
                openai={"upstream": dead + "/v1"}, anthropic={"upstream": dead}, timeouts={"connect": 0.3}
            ) as base:
                started = time.monotonic()
                response = _post(base, route)
                assert time.monotonic() - started < 3
        finally:
            for filler in fillers:
                filler.close()
    assert response.status_code == 504, response.text
    assert response.headers["x-suture-request-id"] == "fault-none"
    assert "ConnectTimeout" in _error_message(route, response)


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_slow_headers_are_a_504_and_the_pool_recovers(route: str, proxy: str, faulty: FaultyUpstream) -> None:
    response = _post(proxy, route, "slow-headers:2")
    assert response.status_code == 504
    assert response.headers["x-suture-request-id"] == "fault-slow-headers:2"
    message = _error_message(route, response)
    assert "did not answer in time" in message and "ReadTimeout" in message
    _recovers(proxy, route)


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_a_body_cut_short_drops_the_client_connection(route: str, proxy: str, logs: LogLines) -> None:
    # The status line is already out when the body breaks: the only honest signal left is an
    # unfinished body, never a short body passed off as complete.
    with pytest.raises(httpx.RemoteProtocolError):
        _post(proxy, route, "cut-body")
    [line] = wait_for(
        lambda: logs.records("suture.upstream", "upstream failed mid-response; client connection dropped")
    )
    assert line["request_id"] == "fault-cut-body"
    _recovers(proxy, route)


@pytest.mark.parametrize("status", [500, 503, 429])
@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_upstream_errors_are_relayed_as_they_are(route: str, status: int, proxy: str) -> None:
    response = _post(proxy, route, f"status:{status}")
    assert response.status_code == status
    assert response.json() == {"error": {"message": f"upstream says {status}", "type": "upstream_error"}}
    assert response.headers["x-suture-request-id"] == f"fault-status:{status}"
    if status == 429:
        assert response.headers["retry-after"] == "7"
    _recovers(proxy, route)


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_a_keep_alive_connection_closed_by_the_upstream_is_not_reused(
    route: str, proxy: str, faulty: FaultyUpstream
) -> None:
    assert _post(proxy, route, "close-after").status_code == 200
    time.sleep(0.3)  # the upstream has closed the pooled connection by now
    _recovers(proxy, route)
    assert [s.connection for s in faulty.seen] == [1, 2]


def _openai_client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=5)


def _anthropic_client(base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base, api_key="sk-ant-test", max_retries=0, timeout=5)


def _openai_stream(base: str, fault: str) -> list[Any]:
    with _openai_client(base) as client:
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_headers={"x-fault": fault},
        )
        return list(stream)


def _anthropic_stream(base: str, fault: str) -> list[Any]:
    with _anthropic_client(base) as client:
        stream = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=16,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            extra_headers={"x-fault": fault},
        )
        return list(stream)


@pytest.mark.parametrize("fault", ["cut-stream", "bad-sse"])
@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_a_broken_stream_makes_the_sdk_raise_not_hang(sdk: str, fault: str, proxy: str) -> None:
    consume = _openai_stream if sdk == "openai" else _anthropic_stream
    assert len(consume(proxy, "ok")) >= 4  # the same stream, unbroken, is read to its end
    started = time.monotonic()
    with pytest.raises(SDK_ERRORS):
        consume(proxy, fault)
    assert time.monotonic() - started < 4
    assert consume(proxy, "ok")


def test_sdk_sees_upstream_errors_as_its_own_error_types(proxy: str) -> None:
    with _openai_client(proxy) as client, pytest.raises(openai.RateLimitError) as limited:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], extra_headers={"x-fault": "status:429"}
        )
    assert limited.value.response.headers["retry-after"] == "7"
    with _anthropic_client(proxy) as client, pytest.raises(anthropic.InternalServerError):
        client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=16,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"x-fault": "slow-headers:2"},
        )
