"""Known fake keys in every credential header reach the upstream, and nothing else: no log line
(Suture's, uvicorn's, the HTTP clients'), no capture file, no metric label, no error body Suture
writes (400, 404, 405, 413, 415, 502, 504 included), even when the provider quotes the key back."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from proxy.logs import JsonFormatter
from proxy.settings import Settings
from tests._support.faulty_upstream import ORPHAN, FaultyUpstream
from tests._support.proxy_e2e import suture
from tests._support.servers import free_port

CANARIES = {
    "authorization": "Bearer sk-canary-authz-7f3a9",
    "x-api-key": "sk-ant-canary-xapikey-51c2e",
    "api-key": "azure-canary-apikey-0b8d1",
    "x-goog-api-key": "goog-canary-key-9e4f2",
    "openai-organization": "org-canary-6a1b3",
    "openai-project": "proj-canary-2c7d8",
    "proxy-authorization": "Basic canary-proxyauth-4d5e6",
    "cookie": "session=canary-cookie-8f9a0",
    "x-amz-security-token": "canary-amz-token-1b2c3",
    "anthropic-version": "2023-06-01",
}
SECRETS = [v.split(" ", 1)[-1].split("=", 1)[-1] for k, v in CANARIES.items() if k != "anthropic-version"]
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
BROKEN_CHAT = {
    **CHAT,
    "messages": [
        {"role": "user", "content": "ls"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": ORPHAN, "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "user", "content": "stop"},
    ],
}


class EveryLine(logging.Handler):
    """Every record of every logger, rendered the way `suture serve` writes it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def every_line() -> Iterator[EveryLine]:
    handler = EveryLine()
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def test_credentials_appear_in_no_log_capture_metric_or_error_body(every_line: EveryLine, tmp_path: Path) -> None:
    capture_dir = tmp_path / "captures"
    has_capture = "capture" in Settings.model_fields
    faulty = FaultyUpstream()
    dead = f"http://127.0.0.1:{free_port()}"
    written: list[httpx.Response] = []  # answers Suture wrote itself
    relayed: list[httpx.Response] = []
    with faulty.running():
        extra = {"capture": {"dir": str(capture_dir)}} if has_capture else {}
        with (
            suture(
                openai={"upstream": faulty.url + "/v1"},
                anthropic={"upstream": faulty.url},
                max_body_bytes=64 * 1024,
                timeouts={"read": 0.5},
                log_level="debug",
                # Every error Suture writes itself, 404 and 405 included: nothing passes through.
                passthrough=False,
                **extra,
            ) as base,
            httpx.Client(base_url=base, headers=CANARIES, timeout=10) as client,
        ):
            for route, body in (("/v1/chat/completions", CHAT), ("/v1/messages", MESSAGES)):
                relayed.append(client.post(route, json=body))
                relayed.append(client.post(route, json={**body, "stream": True}))
                relayed.append(client.post(route, json=body, headers={"x-fault": "status:500"}))
                relayed.append(client.post(route, json=body, headers={"x-fault": "echo-key"}))
                written.append(client.post(route, content=b"{not json", headers={"content-type": "application/json"}))
                written.append(client.post(route, json={"messages": 5}))
                written.append(client.post(route, content=b"x" * 70_000, headers={"content-type": "application/json"}))
                written.append(client.post(route, content=b"{}", headers={"content-type": "text/plain"}))
                written.append(client.post(route, json=body, headers={"x-fault": "slow-headers:2"}))
            relayed.append(client.post("/v1/chat/completions", json=BROKEN_CHAT))
            relayed.append(client.post("/v1/chat/completions", json=BROKEN_CHAT, headers={"x-fault": "status:400"}))
            relayed.append(client.post("/v1/chat/completions", json=BROKEN_CHAT, headers={"x-fault": "echo-key"}))
            written.append(client.get("/v1/nowhere"))
            written.append(client.delete("/v1/messages"))
            relayed.append(client.get("/v1/models"))
            metrics = client.get("/metrics").text
        with suture(openai={"upstream": dead + "/v1"}) as base, httpx.Client(base_url=base, headers=CANARIES) as client:
            written.append(client.post("/v1/chat/completions", json=CHAT))
    assert [r.status_code for r in written] == [400, 400, 413, 415, 504] * 2 + [404, 405, 502]
    assert sorted({r.status_code for r in relayed}) == [200, 400, 401, 500]
    # The test is not vacuous: the client's credentials did reach the upstream, and the
    # provider's echo of the key reached the client it belongs to.
    assert all(s.headers.get("authorization") == CANARIES["authorization"] for s in faulty.seen)
    assert any(_leaks(r.text) for r in relayed)

    for response in written:
        assert _leaks(response.text) == [], response.text
        assert _leaks(str(response.headers)) == []
    assert _leaks(metrics) == []
    lines = "\n".join(every_line.lines)
    assert len(every_line.lines) > 30 and '"suture.access"' in lines
    assert _leaks(lines) == [], [line for line in every_line.lines if _leaks(line)][:3]
    if has_capture:
        files = [p for p in capture_dir.rglob("*") if p.is_file()]
        assert files, "the repaired and rejected requests should have been captured"
        for path in files:
            assert _leaks(path.read_bytes().decode("utf-8", "replace")) == [], path
