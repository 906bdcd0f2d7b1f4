"""With a proxy client key configured, requests without it get a provider-shaped 401, compared in
constant time. Client request ids are accepted only when well-formed, and nothing a client sends
(path, query, request id, header, a tool-call id in the body) can forge or split a log line."""

from __future__ import annotations

import hmac
import inspect
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import orjson
import pytest

import proxy.routes.credentials
from tests._support.faulty_upstream import FaultyUpstream
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.rawhttp import request_bytes
from tests._support.servers import free_port, wait_until_ready

REPO = Path(__file__).resolve().parents[2]
KEY = "suture-client-key-3f9c1d"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


def test_requests_without_the_client_key_get_a_provider_shaped_401(
    faulty: FaultyUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(proxy.routes.credentials.hmac, "compare_digest", spy)
    keys = {"upstream_api_key": "sk-upstream-own", "client_api_key": KEY}
    anthropic_version = {"anthropic-version": "2023-06-01"}
    with (
        suture(openai={"upstream": faulty.url + "/v1", **keys}, anthropic={"upstream": faulty.url, **keys}) as base,
        httpx.Client(base_url=base) as client,
    ):
        for route, body, shape in (
            ("/v1/chat/completions", CHAT, "openai"),
            ("/v1/messages", MESSAGES, "anthropic"),
            ("/v1/messages/count_tokens", MESSAGES, "anthropic"),
        ):
            extra = anthropic_version if shape == "anthropic" else {}
            for headers, what in [
                ({}, "missing"),
                ({"authorization": "Bearer"}, "missing"),
                ({"authorization": f"Bearer {KEY[:-1]}"}, "invalid"),
                ({"authorization": f"Bearer {KEY}x"}, "invalid"),
                ({"authorization": f"Bearer {KEY.upper()}"}, "invalid"),
                ({"x-api-key": "nope"}, "invalid"),
                ({"api-key": KEY}, "missing"),  # Azure's header is not Suture's
                ({"authorization": f"Basic {KEY}"}, "missing"),
            ]:
                response = client.post(route, json=body, headers={**extra, **headers})
                assert response.status_code == 401, (route, headers)
                error = response.json()
                if shape == "openai":
                    assert error["error"]["message"] == f"{what} API key for this Suture proxy"
                else:
                    assert error["type"] == "error" and error["error"]["type"] == "authentication_error"
                assert KEY not in response.text and "sk-upstream-own" not in response.text
            assert client.post(route, json=body, headers={**extra, "authorization": f"Bearer {KEY}"}).status_code == 200
            assert client.post(route, json=body, headers={**extra, "x-api-key": KEY}).status_code == 200
        assert client.get("/v1/models").status_code == 401
        assert client.get("/v1/models", headers={"x-api-key": "bad", **anthropic_version}).status_code == 401
        assert client.get("/v1/models", headers={"authorization": f"Bearer {KEY}"}).status_code == 200
    # Every presented key was compared with hmac.compare_digest, as bytes, against the right key.
    assert compared and all(expected == KEY.encode() for _, expected in compared)
    assert (KEY[:-1].encode(), KEY.encode()) in compared and (KEY.encode(), KEY.encode()) in compared
    # Only requests that presented the key reached the upstream, each with Suture's own key instead.
    assert len(faulty.seen) == 7
    assert all(KEY not in json.dumps(s.headers) for s in faulty.seen)
    source = inspect.getsource(proxy.routes.credentials.check_client_key)
    assert "compare_digest" in source and "== expected" not in source and "expected ==" not in source


def test_client_request_ids_are_accepted_only_when_well_formed(faulty: FaultyUpstream, logs: LogLines) -> None:
    good = ["agent-7:turn.3_a", "a", "x" * 128, "0123456789abcdef", "trace:2026-11-29T22.00"]
    bad = ["", "x" * 129, "has space", "semi;colon", 'quote"d', "tab\there", "ünïcode", "a/b", "{json}", "a,b"]
    with suture(openai={"upstream": faulty.url + "/v1"}) as base, httpx.Client(base_url=base) as client:
        for rid in good:
            response = client.post("/v1/chat/completions", json=CHAT, headers={"x-request-id": rid})
            assert response.headers["x-suture-request-id"] == rid
        for rid in bad:
            response = client.post("/v1/chat/completions", json=CHAT, headers=[(b"x-request-id", rid.encode("utf-8"))])
            made = response.headers["x-suture-request-id"]
            assert made != rid and len(made) == 32 and int(made, 16) >= 0
    access = wait_for(
        lambda: len(logs.records("suture.access")) >= len(good) + len(bad) and logs.records("suture.access")
    )
    ids = {line["request_id"] for line in access}
    assert set(good) <= ids
    assert not set(bad) & ids


def _forgeries() -> list[bytes]:
    forged = '{"ts":"x","level":"critical","logger":"suture.access","event":"forged"}'
    crlf = "%0D%0A"
    tool_id = f"call_1\n{forged}\r\n"
    broken = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": tool_id, "type": "function", "function": {"name": f"ls\n{forged}", "arguments": "{}"}}
                ],
            },
            {"role": "user", "content": f"stop\n{forged}"},
        ],
    }
    return [
        request_bytes("GET", f"/nowhere{crlf}{quote(forged)}{crlf}", b""),
        request_bytes("POST", f"/v1/chat/completions?q={crlf}{quote(forged)}", orjson.dumps(broken)),
        request_bytes("POST", "/v1/chat/completions", orjson.dumps(broken), {"user-agent": forged}),
        # Control characters or a bare CR/LF in a header value: the HTTP parser itself refuses these.
        request_bytes("GET", "/healthz", b"", {"x-request-id": "ok\x0bforged"}),
        b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-id: a\rforged\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-id: a\nforged: 1\r\n\r\n",
        f"GET /x\n{forged} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode(),
    ]


def test_log_lines_cannot_be_forged_with_newlines(faulty: FaultyUpstream) -> None:
    """Through `suture serve` as run in production: every stderr line is one JSON object of Suture's."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env.update(SUTURE_OPENAI_UPSTREAM=faulty.url + "/v1", SUTURE_LOG_LEVEL="debug", SUTURE_SHUTDOWN_GRACE_SECONDS="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", process)
        statuses = []
        for raw in _forgeries():
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(raw)
                statuses.append(sock.recv(65536).split(b"\r\n", 1)[0])
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert statuses[:3] == [b"HTTP/1.1 404 Not Found", b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK"]
    assert all(s.startswith(b"HTTP/1.1 400") for s in statuses[3:]), statuses
    lines = stderr.decode().splitlines()
    records = [json.loads(line) for line in lines]  # every line is whole JSON: no line was split
    assert all(isinstance(r, dict) and {"ts", "level", "logger", "event"} <= set(r) for r in records)
    assert not [r for r in records if r["event"] == "forged" or r["level"] == "critical"]
    access = [r for r in records if r["logger"] == "suture.access"]
    assert any("\r\n" in r["path"] and "forged" in r["path"] for r in access)  # kept, escaped, in its field
    repairs = [r for r in records if r["logger"] == "suture.repair" and r["event"] == "repair"]
    # Three per broken request: the id, over OpenAI's 40 characters, is shortened; the name, with
    # characters OpenAI refuses, is renamed; the call is answered.
    assert len(repairs) == 6 and all("\n" in r["tool_call_id"] for r in repairs)
    assert process.returncode == 0
