"""No server-side request forgery: the upstream host comes from configuration only. Host and
X-Forwarded-* headers, absolute-form request targets, path and query tricks, body fields naming
another base URL and upstream redirects all leave the request on the configured upstream; a second,
'evil' upstream that every trick points at must see nothing."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests._support.faulty_upstream import FaultyUpstream
from tests._support.proxy_e2e import suture
from tests._support.rawhttp import request_bytes

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def upstreams() -> Iterator[tuple[FaultyUpstream, FaultyUpstream]]:
    good, evil = FaultyUpstream(), FaultyUpstream()
    with good.running(), evil.running():
        yield good, evil


def _raw(base: str, raw: bytes) -> bytes:
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        answer = b""
        while True:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
            if b"\r\n\r\n" in answer and (b'"}' in answer or b"}}" in answer or b"\r\n0\r\n" in answer):
                break
    return answer


def test_no_header_target_path_or_body_field_redirects_a_request(
    upstreams: tuple[FaultyUpstream, FaultyUpstream],
) -> None:
    good, evil = upstreams
    evil_host = evil.url.removeprefix("http://")
    redirecting_headers = {
        "host": evil_host,
        "x-forwarded-host": evil_host,
        "x-forwarded-proto": "http",
        "x-forwarded-port": evil_host.rsplit(":", 1)[1],
        "x-forwarded-for": "127.0.0.1",
        "x-forwarded-server": evil_host,
        "forwarded": f"for=127.0.0.1;host={evil_host};proto=http",
        "x-original-url": evil.url + "/v1/chat/completions",
        "x-rewrite-url": evil.url + "/v1/chat/completions",
        "x-host": evil_host,
        "x-http-host-override": evil_host,
        "x-real-ip": "127.0.0.1",
        "x-api-key": "sk-ant-x",
        "anthropic-version": "2023-06-01",
    }
    body_fields = {
        "base_url": evil.url,
        "api_base": evil.url,
        "url": evil.url,
        "baseURL": evil.url,
        "endpoint": evil.url,
        "host": evil_host,
        "upstream": evil.url,
    }
    with suture(openai={"upstream": good.url + "/v1"}, anthropic={"upstream": good.url}) as base:
        with httpx.Client(base_url=base, timeout=10) as client:
            sent = 0
            for route, body in (("/v1/chat/completions", CHAT), ("/v1/messages", MESSAGES)):
                for name, value in redirecting_headers.items():
                    assert client.post(route, json=body, headers={name: value}).status_code == 200
                    sent += 1
                assert client.post(route, json={**body, **body_fields}, headers=redirecting_headers).status_code == 200
                sent += 1
                query = client.post(route + f"?url={evil.url}&@{evil_host}=1", json=body)
                assert query.status_code == 200
                sent += 1
            assert client.get("/v1/models", headers=redirecting_headers).status_code == 200
            sent += 1
        # Path tricks, absolute-form targets (as sent to a forward proxy) and fragments, sent raw: an
        # HTTP client would resolve them itself.
        for path in (
            f"//{evil_host}/v1/chat/completions",
            "/v1/chat/completions/../../x",
            f"/v1/chat/completions/{evil.url}",
            f"/{evil_host}/v1/chat/completions",
        ):
            answer = _raw(base, request_bytes("POST", path, orjson.dumps(CHAT), {"connection": "close"}))
            assert answer.startswith((b"HTTP/1.1 404", b"HTTP/1.1 400")), answer[:100]
        for target in (f"{evil.url}/v1/chat/completions", f"http://{evil_host}/v1/messages"):
            answer = _raw(base, request_bytes("POST", target, orjson.dumps(CHAT), {"connection": "close"}))
            assert answer.startswith((b"HTTP/1.1 200", b"HTTP/1.1 400", b"HTTP/1.1 404")), answer[:100]
            sent += answer.startswith(b"HTTP/1.1 200")
        answer = _raw(
            base,
            request_bytes("POST", f"/v1/chat/completions#@{evil_host}", orjson.dumps(CHAT), {"connection": "close"}),
        )
        assert answer.startswith((b"HTTP/1.1 200", b"HTTP/1.1 400")), answer[:100]
        sent += answer.startswith(b"HTTP/1.1 200")
    assert evil.seen == []
    assert len(good.seen) == sent
    assert {s.path.partition("?")[0] for s in good.seen} == {"/v1/chat/completions", "/v1/messages", "/v1/models"}
    for seen in good.seen:
        assert seen.headers["host"] == good.url.removeprefix("http://")


def test_upstream_redirects_are_relayed_not_followed(upstreams: tuple[FaultyUpstream, FaultyUpstream]) -> None:
    good, evil = upstreams
    with suture(openai={"upstream": good.url + "/v1"}) as base, httpx.Client(base_url=base) as client:
        response = client.post("/v1/chat/completions", json=CHAT, headers={"x-fault": f"redirect:{evil.url}"})
    assert response.status_code == 307
    assert response.headers["location"] == evil.url + "/v1/chat/completions"
    assert evil.seen == []


def test_gemini_model_paths_cannot_walk_to_another_host_or_path(
    upstreams: tuple[FaultyUpstream, FaultyUpstream],
) -> None:
    good, evil = upstreams
    evil_host = evil.url.removeprefix("http://")
    body = orjson.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    tricks = [
        "/v1beta/models/..%2F..%2Fv1%2Fchat%2Fcompletions:generateContent",
        "/v1beta/models/%2e%2e:generateContent",
        f"/v1beta/models/gemini%40{evil_host}:generateContent",
        f"/v1beta/models/{evil.url}:generateContent",
        f"/v1beta/models/gemini-2.0-flash:generateContent/..%2F..%2F{evil_host}",
    ]
    # Another method of Gemini's API passes through, to the Gemini upstream only.
    relayed = ["/v1beta/models/gemini-2.0-flash:deleteEverything"]
    with suture(openai={"upstream": good.url + "/v1"}, gemini={"upstream": good.url}) as base:
        for path in tricks:
            answer = _raw(base, request_bytes("POST", path, body, {"connection": "close", "x-goog-api-key": "k"}))
            assert answer.startswith((b"HTTP/1.1 404", b"HTTP/1.1 400")), (path, answer[:120])
        for path in relayed:
            _raw(base, request_bytes("POST", path, body, {"connection": "close", "x-goog-api-key": "k"}))
        answer = _raw(
            base,
            request_bytes(
                "POST",
                "/v1beta/models/gemini-2.0-flash:generateContent",
                body,
                {"connection": "close", "x-goog-api-key": "k"},
            ),
        )
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert evil.seen == []
    assert [s.path for s in good.seen] == [*relayed, "/v1beta/models/gemini-2.0-flash:generateContent"]
