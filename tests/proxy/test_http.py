"""The HTTP shell through a real server, against a small recording upstream: limits, errors,
faults, headers, credentials, logs and metrics. The emulator-backed SDK tests are in test_e2e."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import anyio
import httpx
import orjson
import pytest

from proxy.app import build_app
from proxy.settings import Settings
from tests._support.proxy_e2e import EchoUpstream, LogLines, suture, wait_for
from tests._support.servers import free_port, running_server

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
VALID_OPENAI = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
VALID_ANTHROPIC = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC_HEADERS = {
    "x-api-key": "sk-ant-client",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
}


@pytest.fixture
def upstream() -> Iterator[tuple[str, EchoUpstream]]:
    echo = EchoUpstream()
    with running_server(echo.app()) as url:
        yield url, echo


@pytest.fixture
def proxy(upstream: tuple[str, EchoUpstream]) -> Iterator[str]:
    url, _ = upstream
    with suture(openai={"upstream": url + "/v1"}, anthropic={"upstream": url}, max_body_bytes=4096) as base:
        yield base


def openai_error(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["type"]
    message: str = body["error"]["message"]
    return message


def anthropic_error(response: httpx.Response) -> str:
    body = response.json()
    assert body["type"] == "error"
    message: str = body["error"]["message"]
    return message


def test_health_ready_and_request_ids(proxy: str, logs: LogLines) -> None:
    with httpx.Client(base_url=proxy) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
        own = client.get("/healthz", headers={"x-request-id": "agent-7:turn.3_a"})
        assert own.headers["x-suture-request-id"] == "agent-7:turn.3_a"
        for bad in ("has space", "x" * 129, "semi;colon"):
            made = client.get("/healthz", headers={"x-request-id": bad}).headers["x-suture-request-id"]
            assert made != bad
            assert len(made) == 32
        assert (
            client.get("/healthz").headers["x-suture-request-id"]
            != client.get("/healthz").headers["x-suture-request-id"]
        )
    probes = wait_for(
        lambda: len(logs.records("suture.access", path="/healthz")) >= 6 and logs.records("suture.access")
    )
    # Probes are logged at debug level, so a probe every few seconds does not drown the traffic.
    assert {line["level"] for line in probes} == {"debug"}
    assert {line["request_id"] for line in probes} >= {"agent-7:turn.3_a"}


def test_valid_request_goes_upstream_byte_identical(proxy: str, upstream: tuple[str, EchoUpstream]) -> None:
    _, echo = upstream
    # Odd spacing, key order and escapes that any re-serialization would change.
    raw = b'{ "messages":[{"content":"h\\u00e9llo \\ud83d\\ude00","role":"user"}],\n  "model":"gpt-4o-mini" }'
    with httpx.Client(base_url=proxy) as client:
        response = client.post(
            OPENAI + "?trace=1",
            content=raw,
            headers={
                "authorization": "Bearer sk-client-key",
                "openai-organization": "org-1",
                "openai-project": "proj-1",
                "content-type": "application/json",
                "host": "203.0.113.9",  # an address Suture answers for (names other than loopback get 421)
                "x-forwarded-host": "evil.example",
                "connection": "keep-alive",
            },
        )
    assert response.status_code == 200
    assert response.headers["x-suture-repairs"] == "0"
    [got] = echo.received
    assert got.sha256 == hashlib.sha256(raw).hexdigest()
    assert (got.path, got.query) == ("/v1/chat/completions", "trace=1")
    assert got.header("authorization") == ["Bearer sk-client-key"]
    assert got.header("openai-organization") == ["org-1"]
    assert got.header("openai-project") == ["proj-1"]
    assert got.header("host") != ["203.0.113.9"]
    assert got.header("content-length") == [str(len(raw))]
    # The shared client keeps no cookie: the upstream's set-cookie reaches this client only.
    assert "upstream_session" in response.headers["set-cookie"]
    with httpx.Client(base_url=proxy) as other:
        other.post(OPENAI, json=VALID_OPENAI, headers={"authorization": "Bearer sk-other"})
    assert echo.received[1].header("cookie") == []


def test_anthropic_credentials_and_models_routing(proxy: str, upstream: tuple[str, EchoUpstream]) -> None:
    _, echo = upstream
    headers = {**ANTHROPIC_HEADERS, "anthropic-beta": "prompt-caching-2024-07-31"}
    with httpx.Client(base_url=proxy) as client:
        assert client.post(ANTHROPIC, json=VALID_ANTHROPIC, headers=headers).status_code == 200
        assert client.post(ANTHROPIC + "/count_tokens", json=VALID_ANTHROPIC, headers=headers).status_code == 200
        assert client.get("/v1/models", headers=headers).status_code == 200
        assert client.get("/v1/models", headers={"authorization": "Bearer sk-x"}).status_code == 200
    paths = [r.path for r in echo.received]
    assert paths == ["/v1/messages", "/v1/messages/count_tokens", "/v1/models", "/v1/models"]
    for got in echo.received[:3]:
        assert got.header("x-api-key") == ["sk-ant-client"]
        assert got.header("anthropic-version") == ["2023-06-01"]
        assert got.header("anthropic-beta") == ["prompt-caching-2024-07-31"]
    assert echo.received[3].header("authorization") == ["Bearer sk-x"]


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_bad_bodies_get_a_provider_shaped_400(proxy: str, route: str, upstream: tuple[str, EchoUpstream]) -> None:
    error = openai_error if route == OPENAI else anthropic_error
    with httpx.Client(base_url=proxy) as client:
        for raw, expected in [
            (b"{not json", "not valid JSON"),
            (b"", "not valid JSON"),
            (b"[1, 2]", "must be a JSON object, not an array"),
            (b'"text"', "must be a JSON object, not a string"),
        ]:
            response = client.post(route, content=raw, headers=ANTHROPIC_HEADERS)
            assert response.status_code == 400
            assert expected in error(response)
            assert response.headers["x-suture-request-id"]
    assert upstream[1].received == []


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_body_over_the_limit_gets_413(proxy: str, route: str, upstream: tuple[str, EchoUpstream]) -> None:
    error = openai_error if route == OPENAI else anthropic_error
    big = orjson.dumps({"messages": [{"role": "user", "content": "x" * 5000}]})
    with httpx.Client(base_url=proxy) as client:
        declared = client.post(route, content=big, headers={"content-type": "application/json"})
        assert declared.status_code == 413
        assert "4096 bytes" in error(declared)

        def chunks() -> Iterator[bytes]:  # no content-length: the limit applies to bytes as they stream in
            for i in range(0, len(big), 1000):
                yield big[i : i + 1000]

        streamed = client.post(route, content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413
        assert "4096 bytes" in error(streamed)
    assert upstream[1].received == []


def test_unreachable_upstream_is_502_naming_it(logs: LogLines) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with suture(openai={"upstream": dead + "/v1"}, anthropic={"upstream": dead}) as base, httpx.Client() as c:
        response = c.post(base + OPENAI, json=VALID_OPENAI, headers={"authorization": "Bearer sk-canary-502"})
        assert response.status_code == 502
        assert f"{dead}/v1" in openai_error(response)
        assert "sk-canary" not in response.text
        response = c.post(base + ANTHROPIC, json=VALID_ANTHROPIC, headers=ANTHROPIC_HEADERS)
        assert response.status_code == 502
        assert dead in anthropic_error(response)
    access = wait_for(lambda: logs.records("suture.access", "request", path=OPENAI))
    assert access[0]["upstream_status"] == "unreachable"
    assert all("sk-canary" not in line for line in logs.lines)


def test_slow_upstream_is_504() -> None:
    slow = EchoUpstream(sleep=1.0)
    with (
        running_server(slow.app(), timeout_graceful_shutdown=1) as up,
        suture(openai={"upstream": up + "/v1"}, timeouts={"read": 0.2}) as base,
        httpx.Client() as c,
    ):
        started = time.monotonic()
        response = c.post(base + OPENAI, json=VALID_OPENAI)
        assert time.monotonic() - started < 0.9
        assert response.status_code == 504
        assert "did not answer in time" in openai_error(response)
        assert up in openai_error(response)


def test_sse_is_relayed_as_it_arrives_and_disconnect_cancels_upstream(logs: LogLines) -> None:
    slow = EchoUpstream(stream_delay=0.3, events=20)
    with running_server(slow.app(), timeout_graceful_shutdown=1) as up, suture(openai={"upstream": up + "/v1"}) as base:
        with httpx.Client() as client:
            started = time.monotonic()
            with client.stream("POST", base + OPENAI, json={**VALID_OPENAI, "stream": True}) as response:
                assert response.headers["cache-control"] == "no-cache"
                assert response.headers["x-accel-buffering"] == "no"
                request_id = response.headers["x-suture-request-id"]
                first = next(response.iter_raw())
                # The first event arrives long before the 20 x 0.3 s stream would end.
                assert time.monotonic() - started < 1.5
                assert first.startswith(b"data: {")
        assert wait_for(lambda: slow.disconnects == 1, timeout=1.0)
        assert wait_for(lambda: logs.records("suture.upstream", "client disconnected; upstream request cancelled"))
        [cut] = logs.records("suture.upstream", "client disconnected; upstream request cancelled")
        assert cut["request_id"] == request_id
        access = wait_for(lambda: logs.records("suture.access", "request", path=OPENAI))
        assert access[0]["outcome"] == "client_disconnected"
        with httpx.Client() as client:
            metrics = client.get(base + "/metrics").text
        assert 'suture_client_disconnects_total{upstream="openai"} 1.0' in metrics


def test_own_upstream_key_and_client_key(upstream: tuple[str, EchoUpstream], logs: LogLines) -> None:
    url, echo = upstream
    settings = {
        "openai": {"upstream": url + "/v1", "upstream_api_key": "sk-upstream-canary", "client_api_key": "proxy-canary"},
        "anthropic": {"upstream": url, "upstream_api_key": "sk-ant-upstream-canary", "client_api_key": "proxy-canary"},
    }
    with suture(**settings) as base, httpx.Client(base_url=base) as client:
        missing = client.post(OPENAI, json=VALID_OPENAI)
        assert missing.status_code == 401
        assert "missing API key" in openai_error(missing)
        wrong = client.post(ANTHROPIC, json=VALID_ANTHROPIC, headers={**ANTHROPIC_HEADERS, "x-api-key": "nope"})
        assert wrong.status_code == 401
        assert anthropic_error(wrong) == "invalid API key for this Suture proxy"
        assert wrong.json()["error"]["type"] == "authentication_error"
        assert echo.received == []

        ok = client.post(OPENAI, json=VALID_OPENAI, headers={"authorization": "Bearer proxy-canary"})
        assert ok.status_code == 200
        ok = client.post(ANTHROPIC, json=VALID_ANTHROPIC, headers={**ANTHROPIC_HEADERS, "x-api-key": "proxy-canary"})
        assert ok.status_code == 200
    openai_got, anthropic_got = echo.received
    assert openai_got.header("authorization") == ["Bearer sk-upstream-canary"]
    assert anthropic_got.header("x-api-key") == ["sk-ant-upstream-canary"]
    assert anthropic_got.header("authorization") == []
    assert wait_for(lambda: len(logs.records("suture.access")) >= 4)
    assert all("canary" not in line for line in logs.lines)


def test_metrics_and_access_log(proxy: str, logs: LogLines) -> None:
    with httpx.Client(base_url=proxy) as client:
        client.post(OPENAI, json=VALID_OPENAI, headers={"authorization": "Bearer sk-canary-metrics"})
        client.post(OPENAI, content=b"nope", headers={"content-type": "application/json"})
        wait_for(lambda: len(logs.records("suture.access", path=OPENAI)) >= 2)
        text = client.get("/metrics").text
    ok_line = 'suture_requests_total{method="POST",model="gpt-4o-mini",route="/v1/chat/completions",status="200",upstream="openai"}'
    assert f"{ok_line} 1.0" in text
    # Not JSON: no model, and the upstream it was bound for.
    bad_line = (
        'suture_requests_total{method="POST",model="",route="/v1/chat/completions",status="400",upstream="openai"}'
    )
    assert f"{bad_line} 1.0" in text
    assert 'suture_upstream_responses_total{status="200",upstream="openai"} 1.0' in text
    assert "suture_request_duration_seconds_bucket" in text
    assert "suture_upstream_response_seconds_bucket" in text
    # Each access line is written after its response's last byte, so their order may vary.
    ok, bad = sorted(logs.records("suture.access", "request", path=OPENAI), key=lambda r: r["status"])
    assert ok["method"] == "POST"
    assert ok["path"] == OPENAI
    assert (ok["status"], ok["upstream_status"], ok["repairs"]) == (200, 200, 0)
    assert isinstance(ok["duration_ms"], float)
    assert (bad["status"], bad["upstream_status"]) == (400, None)
    assert all("sk-canary" not in line for line in logs.lines)


def test_content_encoding_is_relayed_as_the_client_negotiated_it() -> None:
    gz = EchoUpstream(gzip=True)
    with running_server(gz.app()) as up, suture(openai={"upstream": up + "/v1"}) as base, httpx.Client() as client:
        response = client.post(base + OPENAI, json=VALID_OPENAI, headers={"accept-encoding": "gzip"})
        assert response.headers["content-encoding"] == "gzip"
        assert int(response.headers["content-length"]) < len(response.content)  # raw bytes, still gzipped
        assert response.json()["ok"] is True
        client.headers.pop("accept-encoding")
        plain = client.post(base + OPENAI, json=VALID_OPENAI)
        assert "content-encoding" not in plain.headers
        assert plain.json()["ok"] is True
    assert gz.received[0].header("accept-encoding") == ["gzip"]
    # A client that named no encoding gets none, whatever httpx would have asked for.
    assert gz.received[1].header("accept-encoding") == ["identity"]


def test_upstream_failing_mid_stream_drops_the_client_connection(logs: LogLines) -> None:
    stalls = EchoUpstream(stream_delay=1.0, events=3)
    with (
        running_server(stalls.app(), timeout_graceful_shutdown=1) as up,
        suture(openai={"upstream": up + "/v1"}, timeouts={"read": 0.3}) as base,
        httpx.Client() as client,
        client.stream("POST", base + OPENAI, json={**VALID_OPENAI, "stream": True}) as response,
    ):
        assert response.status_code == 200
        received = b""
        # A clean end would pass a cut stream off as complete; the connection is dropped instead.
        with pytest.raises(httpx.RemoteProtocolError):
            for chunk in response.iter_raw():
                received += chunk
        assert received.startswith(b"data: {")
    [line] = wait_for(
        lambda: logs.records("suture.upstream", "upstream failed mid-response; client connection dropped")
    )
    assert line["error"] == "ReadTimeout"


def test_the_lifespan_owns_the_upstream_clients() -> None:
    app = build_app(Settings())
    state = app.state.suture

    async def without_lifespan() -> None:
        # ASGITransport runs no lifespan: no clients, so not ready, and a 503 rather than a crash.
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            assert (await client.get("/readyz")).status_code == 503
            response = await client.post(ANTHROPIC, json=VALID_ANTHROPIC)
            assert response.status_code == 503
            assert "not ready" in anthropic_error(response)

    anyio.run(without_lifespan)
    with running_server(app) as url, httpx.Client() as client:
        assert state.ready
        assert sorted(state.upstreams) == ["anthropic", "bedrock", "gemini", "openai"]
        assert client.get(url + "/readyz").status_code == 200
    assert not state.ready
    assert all(upstream.closed for upstream in state.upstreams.values())


def test_upstream_connections_are_a_gauge_busy_while_streaming_then_idle() -> None:
    slow = EchoUpstream(stream_delay=0.05, events=20)
    busy = 'suture_upstream_connections{state="busy",upstream="openai"}'
    idle = 'suture_upstream_connections{state="idle",upstream="openai"}'
    with (
        running_server(slow.app(), timeout_graceful_shutdown=1) as up,
        suture(openai={"upstream": up + "/v1"}) as base,
        httpx.Client(base_url=base) as client,
    ):
        before = client.get("/metrics").text
        assert f"{busy} 0.0" in before and f"{idle} 0.0" in before
        with client.stream("POST", OPENAI, json={**VALID_OPENAI, "stream": True}) as response:
            chunks = response.iter_raw()  # held: a dropped generator would close the stream
            next(chunks)
            during = client.get("/metrics").text
            assert f"{busy} 1.0" in during and f"{idle} 0.0" in during
            assert b"[DONE]" in b"".join(chunks)
        after = client.get("/metrics").text
        # The stream is over: its keep-alive connection waits in the pool for the next request.
        assert f"{busy} 0.0" in after and f"{idle} 1.0" in after
