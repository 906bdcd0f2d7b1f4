"""End to end through real servers: the official SDKs -> Suture -> the strict emulator.

The seed transcript is seed 004's: a user stops an agent while `slow_tool` runs, the agent
framework appends its recovery message, and the user's next turn leaves the call unanswered,
which both providers reject with a 400.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import orjson
import pytest
from starlette.applications import Starlette

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_server

INTERRUPTED = "I noticed that you have interrupted me. What can I do for you?"
STOP = "停！换个做法：直接回答 42"
OPENAI_KEY = "sk-openai-canary-0123456789"
ANTHROPIC_KEY = "sk-ant-canary-0123456789"

SEED_OPENAI: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "user", "content": "Run the slow tool, please."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "tc_slow_1", "type": "function", "function": {"name": "slow_tool", "arguments": "{}"}}
            ],
        },
        {"role": "assistant", "content": INTERRUPTED},
        {"role": "user", "content": STOP},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "slow_tool", "parameters": {"type": "object", "properties": {}}},
        }
    ],
}
SEED_ANTHROPIC: dict[str, Any] = {
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "messages": [
        {"role": "user", "content": "Run the slow tool, please."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tc_slow_1", "name": "slow_tool", "input": {}}]},
        {"role": "assistant", "content": INTERRUPTED},
        {"role": "user", "content": STOP},
    ],
    "tools": [{"name": "slow_tool", "input_schema": {"type": "object", "properties": {}}}],
}
# A healthy agent turn: the call was answered. Nothing to repair, so the bytes must pass untouched.
VALID_OPENAI: dict[str, Any] = {
    **SEED_OPENAI,
    "messages": [
        *SEED_OPENAI["messages"][:2],
        {"role": "tool", "tool_call_id": "tc_slow_1", "content": "done: 41.9"},
        {"role": "user", "content": STOP},
    ],
}
VALID_ANTHROPIC: dict[str, Any] = {
    **SEED_ANTHROPIC,
    "messages": [
        *SEED_ANTHROPIC["messages"][:2],
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tc_slow_1", "content": "done"}]},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": STOP},
    ],
}


@dataclass
class Emulator:
    url: str
    app: Starlette
    record: Path

    def entries(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]

    def requests(self) -> list[dict[str, Any]]:
        return [e for e in self.entries() if "event" not in e]


@dataclass
class Stack:
    openai_emulator: Emulator
    anthropic_emulator: Emulator
    suture: str

    def openai(self, *, direct: bool = False) -> openai.OpenAI:
        base = self.openai_emulator.url if direct else self.suture
        return openai.OpenAI(base_url=base + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=10)

    def anthropic(self, *, direct: bool = False) -> anthropic.Anthropic:
        base = self.anthropic_emulator.url if direct else self.suture
        return anthropic.Anthropic(base_url=base, api_key=ANTHROPIC_KEY, max_retries=0, timeout=10)


@contextlib.contextmanager
def emulator(provider: str, tmp_path: Path, stream_delay: float = 0.0) -> Iterator[Emulator]:
    record = tmp_path / f"{provider}.jsonl"
    app = build_emulator_app(
        EmulatorConfig(provider=provider, record_path=record, stream_delay=stream_delay)  # type: ignore[arg-type]
    )
    with running_server(app, timeout_graceful_shutdown=1) as url:
        yield Emulator(url, app, record)


@contextlib.contextmanager
def stack(tmp_path: Path, stream_delay: float = 0.0, **settings: Any) -> Iterator[Stack]:
    with (
        emulator("openai", tmp_path, stream_delay) as oa,
        emulator("anthropic", tmp_path, stream_delay) as an,
        suture(
            openai={"upstream": oa.url + "/v1", **settings.pop("openai", {})},
            anthropic={"upstream": an.url},
            **settings,
        ) as url,
    ):
        yield Stack(oa, an, url)


@pytest.fixture
def repairing(tmp_path: Path) -> Iterator[Stack]:
    with stack(tmp_path) as s:
        yield s


def assert_openai_seed_repaired(forwarded: dict[str, Any]) -> None:
    messages = forwarded["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[2]["tool_call_id"] == "tc_slow_1"
    assert "slow_tool" in messages[2]["content"]
    assert messages[3]["content"] == INTERRUPTED
    assert messages[4]["content"] == STOP


def assert_anthropic_seed_repaired(forwarded: dict[str, Any]) -> None:
    messages = forwarded["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    [result] = messages[2]["content"]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "tc_slow_1", True)
    assert messages[3]["content"] == INTERRUPTED
    assert messages[4]["content"] == STOP


def test_openai_seed_400_direct_200_through_suture(repairing: Stack, logs: LogLines) -> None:
    with repairing.openai(direct=True) as direct, pytest.raises(openai.BadRequestError) as info:
        direct.chat.completions.create(**SEED_OPENAI)
    assert "tc_slow_1" in str(info.value)

    with repairing.openai() as client:
        raw = client.chat.completions.with_raw_response.create(**SEED_OPENAI)
        assert raw.headers["x-suture-repairs"] == "1"
        completion = raw.parse()
        assert completion.choices[0].message.content
        stream = client.chat.completions.create(**SEED_OPENAI, stream=True)
        with stream:
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text

    direct_call, plain, streamed = repairing.openai_emulator.requests()
    assert direct_call["status"] == 400
    for forwarded in (plain, streamed):
        assert forwarded["status"] == 200
        assert forwarded["path"] == "/v1/chat/completions"
        assert_openai_seed_repaired(forwarded["body"])
    assert streamed["body"]["stream"] is True

    repairs = wait_for(lambda: len(logs.records("suture.repair")) >= 2 and logs.records("suture.repair"))
    first = repairs[0]
    assert first["request_id"] == raw.headers["x-suture-request-id"]
    assert (first["code"], first["rule"], first["mode"]) == ("TP001", "orphan-tool-call", "repair")
    assert (first["message_index"], first["tool_call_id"]) == (1, "tc_slow_1")
    assert first["action"]
    assert first["detail"]


def test_anthropic_seed_400_direct_200_through_suture(repairing: Stack) -> None:
    with repairing.anthropic(direct=True) as direct, pytest.raises(anthropic.BadRequestError) as info:
        direct.messages.create(**SEED_ANTHROPIC)
    assert "tc_slow_1" in str(info.value)

    with repairing.anthropic() as client:
        raw = client.messages.with_raw_response.create(**SEED_ANTHROPIC)
        assert raw.headers["x-suture-repairs"] == "1"
        assert raw.parse().content
        with client.messages.stream(**SEED_ANTHROPIC) as stream:
            assert stream.get_final_text()
            assert stream.response.headers["x-suture-repairs"] == "1"
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            assert stream.response.headers["cache-control"] == "no-cache"
            assert stream.response.headers["x-accel-buffering"] == "no"

    direct_call, plain, streamed = repairing.anthropic_emulator.requests()
    assert direct_call["status"] == 400
    for forwarded in (plain, streamed):
        assert forwarded["status"] == 200
        assert_anthropic_seed_repaired(forwarded["body"])
    assert streamed["body"]["stream"] is True


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_valid_transcripts_arrive_byte_identical_with_credentials(repairing: Stack, api: str) -> None:
    body = VALID_OPENAI if api == "openai" else VALID_ANTHROPIC
    # Unusual spacing and escapes: any re-serialization would change the digest.
    raw = json.dumps(body, indent=3, ensure_ascii=True).encode()
    if api == "openai":
        path, emu = "/v1/chat/completions", repairing.openai_emulator
        headers = {
            "authorization": f"Bearer {OPENAI_KEY}",
            "openai-organization": "org-7",
            "openai-project": "p-9",
            "content-type": "application/json",
        }
    else:
        path, emu = "/v1/messages", repairing.anthropic_emulator
        headers = {
            "x-api-key": ANTHROPIC_KEY,
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "b-1",
            "content-type": "application/json",
        }
    with httpx.Client() as client:
        response = client.post(repairing.suture + path, content=raw, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["x-suture-repairs"] == "0"
    [got] = emu.requests()
    assert got["raw_sha256"] == hashlib.sha256(raw).hexdigest()
    assert got["status"] == 200
    for name in headers:
        # The emulator redacts credentials in its record; presence is what it can show.
        expected = "REDACTED" if name in ("authorization", "x-api-key") else headers[name]
        assert got["headers"][name] == expected


def test_upstream_errors_are_relayed_as_sent(repairing: Stack) -> None:
    with httpx.Client() as client:
        response = client.post(repairing.suture + "/v1/chat/completions", json=VALID_OPENAI)
    assert response.status_code == 401
    assert "You didn't provide an API key" in response.json()["error"]["message"]
    # The provider's own id, unchanged: the one its support asks for.
    assert response.headers["x-request-id"].startswith("req_")
    assert response.headers["x-suture-request-id"] != response.headers["x-request-id"]


def test_models_route_by_sdk(repairing: Stack) -> None:
    with repairing.openai() as client:
        assert "gpt-4o-mini" in [m.id for m in client.models.list()]
    with repairing.anthropic() as client:
        assert "claude-haiku-4-5" in [m.id for m in client.models.list()]
    assert [r["path"] for r in repairing.openai_emulator.requests()] == ["/v1/models"]
    assert [r["path"] for r in repairing.anthropic_emulator.requests()] == ["/v1/models"]


def test_report_mode_logs_and_forwards_the_original(tmp_path: Path, logs: LogLines) -> None:
    raw = orjson.dumps(SEED_OPENAI)
    with stack(tmp_path, mode="report") as s, httpx.Client() as client:
        response = client.post(
            s.suture + "/v1/chat/completions",
            content=raw,
            headers={"authorization": f"Bearer {OPENAI_KEY}", "content-type": "application/json"},
        )
        # The provider's own 400: report mode changes nothing on the wire.
        assert response.status_code == 400
        assert "tc_slow_1" in response.json()["error"]["message"]
        assert response.headers["x-suture-repairs"] == "0"
        [got] = s.openai_emulator.requests()
        assert got["raw_sha256"] == hashlib.sha256(raw).hexdigest()
        [line] = wait_for(lambda: logs.records("suture.repair"))
        assert (line["code"], line["mode"], line["event"]) == ("TP001", "report", "repair not applied")
        assert line["request_id"] == response.headers["x-suture-request-id"]
        metrics = client.get(s.suture + "/metrics").text
    assert (
        'suture_repairs_total{code="TP001",mode="report",model="gpt-4o-mini",rule="orphan-tool-call",upstream="openai"} 1.0'
        in metrics
    )


def test_strict_mode_rejects_locally_listing_every_problem(tmp_path: Path) -> None:
    broken = {
        **SEED_OPENAI,
        "messages": [*SEED_OPENAI["messages"], {"role": "tool", "tool_call_id": "tc_nowhere", "content": "x"}],
    }
    with stack(tmp_path, mode="strict") as s:
        with s.openai() as client:
            with pytest.raises(openai.BadRequestError) as info:
                client.chat.completions.create(**broken)
            assert info.value.status_code == 400
            message = info.value.body["message"]  # type: ignore[index]
            assert message.startswith("Suture's strict mode refused this request")
            assert "TP001 orphan-tool-call" in message
            assert "tc_slow_1" in message
            assert "tc_nowhere" in message
            assert "openai.O1" in message
            # Nothing to repair: strict mode forwards as is.
            assert client.chat.completions.create(**VALID_OPENAI).choices
        with s.anthropic() as ac, pytest.raises(anthropic.BadRequestError) as ainfo:
            ac.messages.create(**SEED_ANTHROPIC)
        assert ainfo.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        assert "anthropic.A1" in ainfo.value.body["error"]["message"]  # type: ignore[index]
        assert [r["status"] for r in s.openai_emulator.requests()] == [200]
        assert s.anthropic_emulator.requests() == []


def test_mode_per_route(tmp_path: Path) -> None:
    with stack(tmp_path, openai={"mode": "strict"}) as s:
        with s.openai() as client, pytest.raises(openai.BadRequestError):
            client.chat.completions.create(**SEED_OPENAI)
        with s.anthropic() as ac:
            assert ac.messages.create(**SEED_ANTHROPIC).content
        assert s.openai_emulator.requests() == []
        assert_anthropic_seed_repaired(s.anthropic_emulator.requests()[0]["body"])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_client_disconnect_mid_stream_cancels_the_upstream(tmp_path: Path, api: str, logs: LogLines) -> None:
    with stack(tmp_path, stream_delay=0.25) as s:
        emu = s.openai_emulator if api == "openai" else s.anthropic_emulator
        if api == "openai":
            with s.openai() as client:
                stream = client.chat.completions.create(**SEED_OPENAI, stream=True)
                request_id = stream.response.headers["x-suture-request-id"]
                with stream:
                    next(iter(stream))
        else:
            with s.anthropic() as ac, ac.messages.stream(**SEED_ANTHROPIC) as astream:
                request_id = astream.response.headers["x-suture-request-id"]
                next(iter(astream))
        # The stream would run for seconds more; the emulator must see the cut within one.
        assert wait_for(lambda: emu.app.state.disconnects == 1, timeout=1.0)
        assert any(e.get("event") == "disconnected" for e in emu.entries())
        cut = wait_for(lambda: logs.records("suture.upstream", "client disconnected; upstream request cancelled"))
        assert cut[0]["request_id"] == request_id


def test_metrics_logs_and_no_secrets(repairing: Stack, logs: LogLines) -> None:
    with repairing.openai() as client:
        client.chat.completions.create(**SEED_OPENAI)
    with repairing.anthropic() as ac:
        ac.messages.create(**SEED_ANTHROPIC)
    access = wait_for(lambda: len(logs.records("suture.access", "request")) >= 2 and logs.records("suture.access"))
    assert sorted(a["path"] for a in access) == ["/v1/chat/completions", "/v1/messages"]
    assert all(a["level"] == "info" for a in access)
    assert all(a["repairs"] == 1 and a["upstream_status"] == 200 and a["status"] == 200 for a in access)
    with httpx.Client() as client:
        metrics = client.get(repairing.suture + "/metrics").text
    # Labelled by the client's model and the upstream's name (as the access lines are).
    assert (
        'suture_repairs_total{code="TP001",mode="repair",model="gpt-4o-mini",rule="orphan-tool-call",upstream="openai"} 1.0'
        in metrics
    )
    assert (
        'suture_repairs_total{code="TP001",mode="repair",model="claude-haiku-4-5",rule="orphan-tool-call",upstream="anthropic"} 1.0'
        in metrics
    )
    assert sorted((a["model"], a["upstream"]) for a in access) == [
        ("claude-haiku-4-5", "anthropic"),
        ("gpt-4o-mini", "openai"),
    ]
    assert 'suture_upstream_responses_total{status="200",upstream="anthropic"} 1.0' in metrics
    assert logs.lines
    for line in logs.lines:
        assert "canary" not in line
        assert STOP not in line  # bodies are never logged
