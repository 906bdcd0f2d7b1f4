"""The request log, and proof that a client abandoning a stream is seen and recorded."""

from __future__ import annotations

import hashlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app, main_emulate
from tests._support.emulator import Emulator
from tests._support.servers import running_server

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_requests_are_recorded_with_secrets_redacted(emulator: Emulator) -> None:
    raw = json.dumps(CHAT, indent=2).encode()
    secrets = {
        "authorization": "Bearer sk-secret-1",
        "x-api-key": "sk-secret-2",
        "api-key": "sk-secret-3",
        "x-goog-api-key": "sk-secret-4",
    }
    with httpx.Client(base_url=emulator.url) as http:
        ok = http.post("/v1/chat/completions", content=raw, headers={**secrets, "X-Trace": "t-1"})
        bad = http.post("/v1/chat/completions", content=b"not json", headers=secrets)
        denied = http.post("/v1/chat/completions", json=CHAT)
    assert (ok.status_code, bad.status_code, denied.status_code) == (200, 400, 401)

    text = emulator.record.read_text()
    assert "sk-secret" not in text
    entries = [e for e in lines(emulator.record) if e.get("headers", {}).get("x-api-key") == "REDACTED"]
    first, second = entries[-2:]
    assert first["path"] == "/v1/chat/completions"
    assert first["status"] == 200
    assert first["body"] == CHAT
    assert first["raw_sha256"] == hashlib.sha256(raw).hexdigest()
    assert first["headers"]["x-trace"] == "t-1"
    assert all(first["headers"][name] == "REDACTED" for name in secrets)
    assert second["body"] == "not json" and second["status"] == 400
    last = lines(emulator.record)[-1]
    assert last["status"] == 401 and "authorization" not in last["headers"]
    indexes = [e["index"] for e in lines(emulator.record) if "index" in e]
    assert indexes == sorted(indexes) and len(set(indexes)) == len(indexes)


def test_healthz_is_not_recorded(emulator: Emulator) -> None:
    before = emulator.record.read_text() if emulator.record.exists() else ""
    httpx.get(emulator.url + "/healthz")
    after = emulator.record.read_text() if emulator.record.exists() else ""
    assert before == after


def wait_for(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize(
    ("path", "body", "headers"),
    [
        ("/v1/chat/completions", {**CHAT, "stream": True}, {"authorization": "Bearer sk-test"}),
        ("/v1/responses", {"model": "gpt-4.1", "input": "hello", "stream": True}, {"authorization": "Bearer k"}),
        (
            "/v1/messages",
            {**CHAT, "model": "claude-sonnet-4-6", "max_tokens": 32, "stream": True},
            {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
        ),
    ],
)
def test_client_disconnect_mid_stream_is_recorded(
    tmp_path: Path, path: str, body: dict[str, Any], headers: dict[str, str]
) -> None:
    record = tmp_path / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, stream_delay=0.05))
    with running_server(app) as url, httpx.Client(base_url=url) as http:
        with http.stream("POST", path, json=body, headers=headers) as response:
            assert response.status_code == 200
            next(response.iter_raw())  # one frame arrives, then the client walks away
        assert wait_for(lambda: app.state.disconnects == 1)
        # A stream read to the end is not a disconnect.
        complete = http.post(path, json=body, headers=headers)
        assert complete.status_code == 200
        time.sleep(0.1)
        assert app.state.disconnects == 1

    entries = lines(record)
    (event,) = [e for e in entries if e.get("event") == "disconnected"]
    requests = [e for e in entries if "event" not in e]
    assert event["path"] == path
    assert event["request_index"] == requests[0]["index"] == 0
    assert 1 <= event["frames_sent"] < 10
    assert app.state.requests == 2


def test_concurrent_requests_each_get_one_whole_line(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    body = {**CHAT, "messages": [{"role": "user", "content": "word " * 2000}]}
    with running_server(app) as url, httpx.Client(base_url=url) as http:

        def post(_: int) -> int:
            return http.post("/v1/chat/completions", json=body, headers={"authorization": "Bearer k"}).status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(post, range(24)))
    assert statuses == [200] * 24
    entries = lines(record)
    assert len(entries) == 24
    assert sorted(e["index"] for e in entries) == list(range(24))


def test_main_emulate_serves_the_configured_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import uvicorn

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    main_emulate("anthropic", "127.0.0.1", 9999, tmp_path / "r.jsonl", 0.25)
    assert (served["host"], served["port"]) == ("127.0.0.1", 9999)
    assert served["app"].state.config == EmulatorConfig(
        provider="anthropic", record_path=tmp_path / "r.jsonl", stream_delay=0.25
    )
    with pytest.raises(ValueError, match="provider"):
        main_emulate("gemini", "127.0.0.1", 9999, None, 0.0)
