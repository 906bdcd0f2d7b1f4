"""Bad input through the running server: each gets the right 4xx, in the provider's error shape,
with a message naming the problem and the request id; none gets a 500; and the server keeps
serving (a good request follows every bad one)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests._support.proxy_e2e import EchoUpstream, suture
from tests._support.servers import running_server

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
ANTHROPIC_HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", "content-type": "application/json"}
LIMIT = 4 * 1024 * 1024
ORPHAN_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
}


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoUpstream]:
    upstream = EchoUpstream()
    with running_server(upstream.app()) as url:
        upstream.url = url  # type: ignore[attr-defined]
        yield upstream


@pytest.fixture(scope="module")
def proxy(echo: EchoUpstream) -> Iterator[str]:
    url = echo.url  # type: ignore[attr-defined]
    with suture(openai={"upstream": url + "/v1"}, anthropic={"upstream": url}, max_body_bytes=LIMIT) as base:
        yield base


@pytest.fixture(scope="module")
def client(proxy: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=proxy, timeout=10) as c:
        yield c


def error_of(response: httpx.Response, shape: str) -> str:
    """The error message, after checking the body has exactly ``shape``'s error envelope."""
    body = response.json()
    assert response.headers["content-type"] == "application/json"
    assert len(response.headers["x-suture-request-id"]) >= 1
    if shape == "openai":
        assert set(body) == {"error"} and set(body["error"]) >= {"message", "type"}
    elif shape == "anthropic":
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    elif shape == "gemini":
        assert set(body["error"]) == {"code", "message", "status"} and body["error"]["code"] == response.status_code
    else:
        assert set(body) == {"message"} and response.headers["x-amzn-errortype"]
    message: str = body["error"]["message"] if shape != "bedrock" else body["message"]
    return message


def _raw_request(client: httpx.Client, data: bytes) -> bytes:
    """``data`` sent as it is (an HTTP client would normalise the path), the answer read to the end."""
    with socket.create_connection(("127.0.0.1", client.base_url.port or 80), timeout=5) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def still_serving(client: httpx.Client) -> None:
    assert client.post(OPENAI, json=CHAT).status_code == 200
    assert client.post(ANTHROPIC, json=MESSAGES, headers=ANTHROPIC_HEADERS).status_code == 200


def _nested(depth: int) -> str:
    return "[" * depth + "1" + "]" * depth


BAD_BODIES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "not valid JSON"),
    ("not json", b"{model: gpt}", "not valid JSON"),
    ("truncated", b'{"messages": [', "not valid JSON"),
    ("array", b"[1, 2]", "must be a JSON object, not an array"),
    ("string", b'"hello"', "must be a JSON object, not a string"),
    ("null", b"null", "must be a JSON object"),
    ("number", b"42", "must be a JSON object"),
    ("invalid utf-8", b'{"messages": [{"role": "user", "content": "\xff\xfe\xc3"}]}', "UTF-8"),
    ("lone surrogate", b'{"messages": [{"role": "user", "content": "\\ud800"}]}', "not valid JSON"),
    ("too deep", f'{{"messages": {_nested(2000)}}}'.encode(), "depth"),
    ("no messages", b'{"model": "m"}', "messages: is required"),
]

WRONG_TYPES: dict[str, list[tuple[Any, str]]] = {
    OPENAI: [
        (5, "messages: must be a list"),
        ([5], "messages[0]: must be an object"),
        ([{"role": 5, "content": "x"}], "messages[0].role"),
        ([{"role": "robot", "content": "x"}], "messages[0].role: must be one of"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "user", "content": [5]}], "messages[0].content[0]: must be an object"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": 5}], "messages[1].tool_calls"),
        ([{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [5]}], "messages[1].tool_calls[0]"),
        (
            [{"role": "user", "content": "x"}, {**ORPHAN_CALL, "tool_calls": [{"id": 5}]}],
            "messages[1].tool_calls[0].id",
        ),
        (
            [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": 5, "content": "r"}],
            "messages[1].tool_call_id",
        ),
    ],
    ANTHROPIC: [
        ({}, "messages: must be a list"),
        (["x"], "messages[0]: must be an object"),
        ([{"role": 5, "content": "x"}], "messages[0].role"),
        ([{"role": "tool", "content": "x"}], "messages[0].role: must be 'user' or 'assistant'"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "user", "content": [5]}], "messages[0].content[0]: must be an object"),
        ([{"role": "user", "content": [{"type": 5}]}], "messages[0].content[0].type"),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": 5, "name": "f", "input": {}}]},
            ],
            "messages[1].content[0].id",
        ),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": {}}]}],
            "messages[0].content[0].tool_use_id",
        ),
    ],
}


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
@pytest.mark.parametrize(
    ("raw", "expected"), [(raw, expected) for _, raw, expected in BAD_BODIES], ids=[name for name, _, _ in BAD_BODIES]
)
def test_malformed_bodies_are_a_400_naming_the_problem(
    client: httpx.Client, route: str, raw: bytes, expected: str
) -> None:
    response = client.post(route, content=raw, headers={**ANTHROPIC_HEADERS, "content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert expected in error_of(response, "openai" if route == OPENAI else "anthropic")
    still_serving(client)


@pytest.mark.parametrize(
    ("route", "messages", "expected"), [(route, m, e) for route, cases in WRONG_TYPES.items() for m, e in cases]
)
def test_wrong_types_at_every_level_are_a_400_naming_the_field(
    client: httpx.Client, echo: EchoUpstream, route: str, messages: Any, expected: str
) -> None:
    before = len(echo.received)
    body = {**(CHAT if route == OPENAI else MESSAGES), "messages": messages}
    response = client.post(route, json=body, headers=ANTHROPIC_HEADERS)
    assert response.status_code == 400, response.text
    assert expected in error_of(response, "openai" if route == OPENAI else "anthropic")
    assert len(echo.received) == before  # nothing went upstream
    still_serving(client)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]
)
@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_a_body_that_is_not_json_by_type_is_a_415(client: httpx.Client, route: str, content_type: str) -> None:
    body = orjson.dumps(CHAT if route == OPENAI else MESSAGES)
    response = client.post(route, content=body, headers={**ANTHROPIC_HEADERS, "content-type": content_type})
    assert response.status_code == 415
    message = error_of(response, "openai" if route == OPENAI else "anthropic")
    assert "Content-Type: application/json" in message and content_type.split(";")[0] in message
    for fine in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
        assert client.post(route, content=body, headers={**ANTHROPIC_HEADERS, "content-type": fine}).status_code == 200
    still_serving(client)


def test_huge_strings_within_the_limit_are_served(client: httpx.Client, echo: EchoUpstream) -> None:
    huge = "长" * (LIMIT // 4)  # 3 bytes each in UTF-8: three quarters of the limit
    response = client.post(OPENAI, json={**CHAT, "messages": [{"role": "user", "content": huge}]})
    assert response.status_code == 200
    broken = [{"role": "user", "content": huge}, ORPHAN_CALL, {"role": "user", "content": "go on"}]
    response = client.post(OPENAI, json={**CHAT, "messages": broken})
    assert response.status_code == 200
    assert response.headers["x-suture-repairs"] == "1"
    assert huge in echo.received[-1].body.decode()
    assert echo.received[-1].header("content-length") == [str(len(echo.received[-1].body))]
    still_serving(client)


def _broken_and_deep(depth: int) -> bytes:
    """An orphan tool call to repair, and a field nested ``depth`` levels (too deep for orjson.dumps)."""
    return (
        '{"model": "m", "messages": [{"role": "user", "content": "x"}, '
        + orjson.dumps(ORPHAN_CALL).decode()
        + f', {{"role": "user", "content": "y", "extra": {_nested(depth)}}}]}}'
    ).encode()


def test_deep_nesting_that_orjson_cannot_write_back_is_still_repaired(client: httpx.Client, echo: EchoUpstream) -> None:
    # orjson reads 1024 levels but writes 254: a broken transcript nested between the two is
    # repaired all the same, and goes upstream whole, its deep field as deep as it came.
    for depth in (300, 1000):
        response = client.post(OPENAI, content=_broken_and_deep(depth), headers={"content-type": "application/json"})
        assert response.status_code == 200, response.text
        assert response.headers["x-suture-repairs"] == "1"
        sent = orjson.loads(echo.received[-1].body)
        assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool", "user"]
        assert sent["messages"][2]["tool_call_id"] == ORPHAN_CALL["tool_calls"][0]["id"]
        assert sent["messages"][3]["extra"] == orjson.loads(_nested(depth))
    still_serving(client)


def test_deep_nesting_in_strict_mode_is_a_400_not_a_500(echo: EchoUpstream) -> None:
    url = echo.url  # type: ignore[attr-defined]
    with suture(openai={"upstream": url + "/v1"}, mode="strict") as base, httpx.Client(base_url=base) as client:
        response = client.post(OPENAI, content=_broken_and_deep(1000), headers={"content-type": "application/json"})
        assert response.status_code == 400
        assert "TP001" in error_of(response, "openai")
        assert client.post(OPENAI, json=CHAT).status_code == 200


UNKNOWN: list[tuple[str, str, dict[str, str], int, str]] = [
    ("GET", "/", {}, 404, "openai"),
    ("POST", "/v1/chat/completion", {}, 404, "openai"),
    ("POST", "/v2/chat/completions", {}, 404, "openai"),
    ("POST", "/v1/messages/batches", {}, 404, "anthropic"),
    ("GET", "/v1/files", ANTHROPIC_HEADERS, 404, "anthropic"),
    ("GET", "/v1/chat/completions", {}, 405, "openai"),
    ("PUT", "/v1/chat/completions", {}, 405, "openai"),
    ("DELETE", "/v1/messages", {}, 405, "anthropic"),
    ("PATCH", "/v1/messages/count_tokens", {}, 405, "anthropic"),
    ("POST", "/v1/models", {}, 405, "openai"),
    ("POST", "/healthz", {}, 405, "openai"),
    ("OPTIONS", "/v1/chat/completions", {}, 405, "openai"),
]


@pytest.fixture(scope="module")
def closed_client(echo: EchoUpstream) -> Iterator[httpx.Client]:
    """Suture with ``passthrough: false``: only its own endpoints answer."""
    url = echo.url  # type: ignore[attr-defined]
    with (
        suture(openai={"upstream": url + "/v1"}, anthropic={"upstream": url}, passthrough=False) as base,
        httpx.Client(base_url=base, timeout=10) as c,
    ):
        yield c


@pytest.mark.parametrize(("method", "path", "headers", "status", "shape"), UNKNOWN)
def test_unknown_paths_and_methods_are_provider_shaped(
    closed_client: httpx.Client, method: str, path: str, headers: dict[str, str], status: int, shape: str
) -> None:
    response = closed_client.request(method, path, headers=headers, content=b"{}")
    assert response.status_code == status, response.text
    message = error_of(response, shape)
    assert path in message
    if status == 405:
        assert response.headers["allow"]
        assert method in message and response.headers["allow"] in message
    elif path.startswith("/v1/"):
        assert "(passthrough: false)" in message  # the setting that would have relayed it
    still_serving(closed_client)


# With pass-through on (the default), the same requests under a provider's API reach its
# upstream as they are; paths under no provider's API, and methods Suture's own paths do not
# take, are still Suture's 404 and 405.
PASSED_THROUGH = [
    (m, p, h) for m, p, h, _, _ in UNKNOWN if p.startswith("/v1/") and not (m == "POST" and p == "/v1/models")
]


@pytest.mark.parametrize(("method", "path", "headers"), PASSED_THROUGH)
def test_other_requests_under_a_provider_s_api_reach_its_upstream(
    client: httpx.Client, echo: EchoUpstream, method: str, path: str, headers: dict[str, str]
) -> None:
    before = len(echo.received)
    response = client.request(method, path, headers=headers, content=b"{}")
    if method in ("GET", "POST"):  # the echo upstream takes these two
        assert response.status_code == 200, response.text
        arrived = echo.received[before:]
        assert [(r.method, r.path) for r in arrived] == [(method, path)]
        assert arrived[0].body == b"{}"
    else:  # and refuses the others with Starlette's plain-text 405, which Suture relays as it is
        assert (response.status_code, response.text) == (405, "Method Not Allowed")
    still_serving(client)


@pytest.mark.parametrize("path", ["/", "/v2/chat/completions", "/healthz/x", "/v1/../v1/files", "/v1//files"])
def test_paths_under_no_provider_s_api_or_that_climb_out_of_it_are_not_relayed(
    client: httpx.Client, echo: EchoUpstream, path: str
) -> None:
    before = len(echo.received)
    answer = _raw_request(client, f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]
    assert len(echo.received) == before


def _raw_exchange(proxy: str, head: bytes, body_chunks: Iterator[bytes], stop_after: int) -> tuple[bytes, int]:
    """Send ``head``, then body chunks until ``stop_after`` bytes are out; read the answer."""
    port = int(proxy.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head)
        sent = 0
        for chunk in body_chunks:
            if sent >= stop_after:
                break
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(chunk)
        answer = b""
        deadline = time.monotonic() + 5
        while b"\r\n\r\n" not in answer and time.monotonic() < deadline:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    return answer, sent


@pytest.mark.parametrize("route", [OPENAI, ANTHROPIC])
def test_a_body_over_the_limit_is_a_413_before_it_is_read_whole(proxy: str, client: httpx.Client, route: str) -> None:
    block = b"x" * 65536
    declared = 64 * LIMIT
    head = (
        f"POST {route} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {declared}\r\n\r\n"
    ).encode()
    # The client has sent a sliver of what it declared when the answer comes.
    answer, sent = _raw_exchange(proxy, head, iter(lambda: block, None), stop_after=0)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent == 0
    assert f"limit of {LIMIT} bytes".encode() in answer

    head = f"POST {route} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n".encode()
    chunk = f"{len(block):x}\r\n".encode() + block + b"\r\n"
    # Undeclared length: the limit applies as the bytes stream in; the rest is never sent.
    answer, sent = _raw_exchange(proxy, head, iter(lambda: chunk, None), stop_after=LIMIT + 4 * len(chunk))
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 2 * LIMIT
    still_serving(client)


def test_no_bad_request_was_ever_a_500(client: httpx.Client) -> None:
    still_serving(client)
    metrics = client.get("/metrics").text
    statuses = {
        line.split('status="')[1].split('"')[0]
        for line in metrics.splitlines()
        if line.startswith("suture_requests_total{")
    }
    assert "200" in statuses
    assert not any(s.startswith("5") for s in statuses), statuses
    # Unknown paths share one label: a client cannot grow the metrics without bound.
    routes = {
        line.split('route="')[1].split('"')[0]
        for line in metrics.splitlines()
        if line.startswith("suture_requests_total{")
    }
    assert "other" in routes and "passthrough" in routes, routes
    assert all(r in ("other", "passthrough", "/healthz") or r.startswith("/v1/") for r in routes), routes


def test_an_unexpected_fault_is_a_provider_shaped_500_with_the_request_id(
    echo: EchoUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    import proxy.routes.transcripts

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("internal detail that must not reach the client")

    monkeypatch.setattr(proxy.routes.transcripts, "validate", boom)
    url = echo.url  # type: ignore[attr-defined]
    with suture(anthropic={"upstream": url}, mode="strict") as base, httpx.Client(base_url=base) as client:
        response = client.post(ANTHROPIC, json=MESSAGES, headers={**ANTHROPIC_HEADERS, "x-request-id": "req-500"})
        assert response.status_code == 500
        assert "in Suture's log" in error_of(response, "anthropic")
        assert "internal detail" not in response.text
        assert response.headers.get_list("x-request-id") == ["req-500"]
        assert response.headers.get_list("x-suture-request-id") == ["req-500"]
        monkeypatch.undo()
        assert client.post(ANTHROPIC, json=MESSAGES, headers=ANTHROPIC_HEADERS).status_code == 200
