"""The Responses WebSocket (OpenAI's WebSocket mode, Codex CLI's default transport) through a running
Suture: GET /v1/responses with Upgrade: websocket, relayed to the strict emulator's own WebSocket.

What reached the emulator is read back from its record (each response.create event is one line,
with the digest of its bytes), so the tests see what Suture sent, not what it says it sent. A
second upstream, ``Probe``, echoes what it gets and reports its handshake: the header policy,
the credentials and the binary frames are read there.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import trustme
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import EchoUpstream, LogLines, suture, wait_for
from tests._support.servers import free_port, running_server
from tests._support.tunnel_proxy import TunnelProxy

KEY = "sk-client-websocket-test"
UPSTREAM_KEY = "sk-suture-upstream-0123456789"
CLIENT_KEY = "suture-client-key-0123456789"
MODEL = "gpt-4.1"
NEXT = "And what should I wear?"
NO_OUTPUT = "No tool output found for function call call_1."


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


CALL = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}
CLEAN = {"type": "response.create", "model": MODEL, "input": [user("weather?"), CALL, OUTPUT, user(NEXT)]}
# An agent interrupted mid-tool: the call never answered, then the user's next words.
BROKEN = {"type": "response.create", "model": MODEL, "input": [user("weather?"), CALL, user(NEXT)]}


def socket_url(base: str) -> str:
    return base.replace("http://", "ws://", 1).replace("https://", "wss://", 1) + "/v1/responses"


def open_socket(base: str, **options: Any) -> ClientConnection:
    headers = {"Authorization": f"Bearer {KEY}", **options.pop("headers", {})}
    return connect(socket_url(base), additional_headers=headers, open_timeout=10, proxy=None, **options)


def answer(ws: ClientConnection) -> list[dict[str, Any]]:
    """The events of one response, up to its last (completed, failed, incomplete, error)."""
    events = []
    while True:
        event = json.loads(ws.recv(timeout=10))
        events.append(event)
        if event["type"] in ("response.completed", "response.failed", "response.incomplete", "error"):
            return events


def refused(base: str, **options: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    """The status, JSON body and headers of a handshake Suture refuses."""
    with pytest.raises(InvalidStatus) as info:
        open_socket(base, **options)
    response = info.value.response
    return response.status_code, json.loads(response.body), {k.lower(): v for k, v in response.headers.raw_items()}


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def requests(self) -> list[dict[str, Any]]:
        return recorded_requests(self.record)

    def closes(self) -> list[dict[str, Any]]:
        lines = self.record.read_text(encoding="utf-8").splitlines() if self.record.exists() else []
        return [e for e in map(json.loads, lines) if e.get("event") == "websocket_closed"]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    record = tmp_path_factory.mktemp("responses-websocket") / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app, timeout_graceful_shutdown=1) as url:
        yield url, record


@pytest.fixture(scope="module")
def stack(emulator: tuple[str, Path]) -> Iterator[Stack]:
    url, record = emulator
    # No retry after a refusal: each repair here must be made before the event is sent.
    with suture(openai={"upstream": url + "/v1", "rejection_repair": {"enabled": False}}, ui={"enabled": True}) as base:
        yield Stack(url, record, base)


@dataclass
class Probe:
    """A WebSocket upstream that reports its handshakes and echoes: text as it came ("authorization?"
    is answered with the Authorization header it got, "close CODE REASON" closes), binary reversed."""

    handshakes: list[dict[str, str]] = field(default_factory=list)
    client_keys: list[str] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(routes=[WebSocketRoute("/v1/responses", self.socket)])

    async def socket(self, ws: WebSocket) -> None:
        self.handshakes.append({k.decode(): v.decode() for k, v in ws.scope["headers"]})
        offered = ws.scope.get("subprotocols") or []
        answer = [(b"x-codex-turn-state", b"turn-1"), (b"x-request-id", b"req_upstream_1"), (b"x-suture-repairs", b"9")]
        await ws.accept(subprotocol=offered[0] if offered else None, headers=answer)
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                await ws.send_bytes(message["bytes"][::-1])
                continue
            text = message["text"]
            if text == "authorization?":
                await ws.send_text(ws.headers.get("authorization", ""))
            elif text.startswith("close "):
                _, code, reason = text.split(" ", 2)
                await ws.close(int(code), reason)
                return
            else:
                await ws.send_text(text)


@pytest.fixture(scope="module")
def probe() -> Iterator[tuple[Probe, str]]:
    upstream = Probe()
    with running_server(upstream.app(), timeout_graceful_shutdown=1) as url:
        yield upstream, url


# ---------------------------------------------------------------------------------------- sessions


def test_a_clean_session_reaches_the_upstream_byte_for_byte(stack: Stack, logs: LogLines) -> None:
    before = len(stack.requests())
    # Spacing of the client's own: a re-serialised event would not keep it.
    sent = json.dumps(CLEAN, indent=1)
    with open_socket(stack.suture) as ws:
        ws.send(json.dumps(CLEAN))
        events = answer(ws)
        assert [e["type"] for e in events][:2] == ["response.created", "response.in_progress"]
        assert events[-1]["type"] == "response.completed"
        assert events[-1]["response"]["output"][0]["content"][0]["text"] == f'Emulated reply. Last user text: "{NEXT}"'
        ws.send(sent)
        assert answer(ws)[-1]["type"] == "response.completed"
        ws.send(json.dumps({"type": "response.processed", "response_id": events[-1]["response"]["id"]}))
        request_id = ws.response.headers["x-suture-request-id"]
    received = stack.requests()[before:]
    assert [r["status"] for r in received] == [200, 200]
    assert received[1]["raw_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    assert received[0]["body"] == CLEAN
    # Each event is a request of its own in the access log; the connection is one more line.
    turns = wait_for(lambda: logs.records("suture.access", "request", method="WEBSOCKET", status=200))
    assert [t["request_id"] for t in turns] == [f"{request_id}.1", f"{request_id}.2"]
    assert all(t["path"] == "/v1/responses" and t["repairs"] == 0 and t["model"] == MODEL for t in turns)
    [connection] = wait_for(lambda: logs.records("suture.access", "request", request_id=request_id))
    assert connection["method"] == "GET" and connection["status"] == 101
    assert connection["route"] == "/v1/responses (websocket)" and connection["upstream_status"] == 101
    [closed] = logs.records("suture.access", "websocket closed", request_id=request_id)
    assert closed["turns"] == 2 and closed["messages_in"] == 3 and closed["closed_by"] == "client"


def test_a_broken_input_is_repaired_and_the_upstream_answers(stack: Stack, logs: LogLines) -> None:
    # Straight to the emulator, the event gets OpenAI's own refusal, as an error event.
    with open_socket(stack.emulator) as direct:
        direct.send(json.dumps(BROKEN))
        [error] = answer(direct)
    assert error["status"] == 400 and error["error"]["message"] == NO_OUTPUT

    before = len(stack.requests())
    with open_socket(stack.suture) as ws:
        ws.send(json.dumps(BROKEN))
        events = answer(ws)
        request_id = ws.response.headers["x-suture-request-id"]
    assert events[-1]["type"] == "response.completed"
    [received] = stack.requests()[before:]
    forwarded = received["body"]["input"]
    assert forwarded[:2] == [user("weather?"), CALL]
    assert forwarded[2]["type"] == "function_call_output" and forwarded[2]["call_id"] == "call_1"
    assert forwarded[3] == user(NEXT) and received["body"]["type"] == "response.create"
    [repair] = logs.records("suture.repair", "repair", request_id=f"{request_id}.1")
    assert repair["code"] == "TP001" and repair["tool_call_id"] == "call_1"
    [turn] = wait_for(lambda: logs.records("suture.access", "request", request_id=f"{request_id}.1"))
    assert turn["repairs_applied"] == 1 and turn["status"] == 200
    metrics = httpx.get(stack.suture + "/metrics").text
    assert 'suture_repairs_total{code="TP001"' in metrics
    assert 'method="WEBSOCKET",model="gpt-4.1",route="/v1/responses",status="200"' in metrics
    # The page lists the event as it lists a POST, with its capture.
    page = wait_for(lambda: f"{request_id}.1" in (text := httpx.get(stack.suture + "/suture/").text) and text)
    assert "TP001" in page
    capture = httpx.get(stack.suture + f"/suture/requests/{request_id}.1/capture.json").json()
    assert capture["original"] == BROKEN and [r["code"] for r in capture["repairs"]] == ["TP001"]


def test_the_official_sdk_s_responses_connect_is_repaired(stack: Stack) -> None:
    client = openai.OpenAI(base_url=stack.suture + "/v1", api_key=KEY, max_retries=0)
    with client.responses.connect() as connection:
        connection.response.create(model=MODEL, input=BROKEN["input"])
        for event in connection:
            if event.type in ("response.completed", "error"):
                break
    assert event.type == "response.completed", event
    assert event.response.output_text == f'Emulated reply. Last user text: "{NEXT}"'


def test_strict_mode_answers_a_broken_event_with_an_error_event(emulator: tuple[str, Path]) -> None:
    url, record = emulator
    with suture(openai={"upstream": url + "/v1", "mode": "strict"}) as base:
        before = len(recorded_requests(record))
        with open_socket(base) as ws:
            ws.send(json.dumps(BROKEN))
            [error] = answer(ws)
            # The connection goes on: a clean event is answered.
            ws.send(json.dumps(CLEAN))
            assert answer(ws)[-1]["type"] == "response.completed"
    assert error["type"] == "error" and error["status"] == 400
    message = error["error"]["message"]
    assert message.startswith(
        "Suture's strict mode refused this request (it was not sent on), 2 problem(s): (1) TP001 orphan-tool-call"
    )
    assert f"responses.R1: {NO_OUTPUT}" in message
    assert [r["body"] for r in recorded_requests(record)[before:]] == [CLEAN]


def test_report_mode_forwards_a_broken_event_unchanged(emulator: tuple[str, Path], logs: LogLines) -> None:
    url, record = emulator
    with suture(openai={"upstream": url + "/v1", "mode": "report"}) as base:
        before = len(recorded_requests(record))
        sent = json.dumps(BROKEN)
        with open_socket(base) as ws:
            ws.send(sent)
            [error] = answer(ws)
    assert error["status"] == 400 and error["error"]["message"] == NO_OUTPUT
    [received] = recorded_requests(record)[before:]
    assert received["raw_sha256"] == hashlib.sha256(sent.encode()).hexdigest()
    assert logs.records("suture.repair", "repair not applied", code="TP001")
    # The provider's refusal is the turn's status, as a POST's 400 would be.
    assert wait_for(lambda: logs.records("suture.access", "request", method="WEBSOCKET", status=400))


# ---------------------------------------------------------------------------------------- closes and limits


def test_the_client_s_close_code_and_reason_reach_the_upstream(stack: Stack) -> None:
    with open_socket(stack.suture) as ws:
        ws.send(json.dumps(CLEAN))
        answer(ws)
        ws.close(4001, "client done")
    assert wait_for(lambda: {"code": 4001, "reason": "client done"} in [_close(e) for e in stack.closes()])


def test_the_upstream_s_close_code_and_reason_reach_the_client(stack: Stack) -> None:
    with open_socket(stack.suture) as ws:
        ws.send(json.dumps({**CLEAN, "input": [user("CLOSE_SOCKET 4002 provider says bye")]}))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
    assert ws.close_code == 4002 and ws.close_reason == "provider says bye"


def test_a_message_over_the_size_limit_is_closed_with_1009(emulator: tuple[str, Path], logs: LogLines) -> None:
    url, record = emulator
    with suture(openai={"upstream": url + "/v1"}, max_body_bytes=4096) as base:
        before = len(recorded_requests(record))
        with open_socket(base) as ws:
            ws.send(json.dumps({**CLEAN, "input": [user("x" * 5000)]}))
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
    assert ws.close_code == 1009 and "Suture's limit of 4096 bytes" in (ws.close_reason or "")
    assert len(recorded_requests(record)) == before
    [line] = wait_for(lambda: logs.records("suture.access", "request", route="/v1/responses (websocket)"))
    assert line["outcome"] == "message_too_big"


# ---------------------------------------------------------------------------------------- credentials and headers


def test_the_client_key_is_checked_before_the_upstream_is_reached(probe: tuple[Probe, str]) -> None:
    upstream, url = probe
    settings = {"upstream": url + "/v1", "upstream_api_key": UPSTREAM_KEY, "client_api_key": CLIENT_KEY}
    with suture(openai=settings) as base:
        before = len(upstream.handshakes)
        status, body, headers = refused(base)
        assert status == 401 and body["error"]["message"] == "invalid API key for this Suture proxy"
        assert headers["x-suture-request-id"] == headers["x-request-id"]
        status, body, _ = refused(base, headers={"Authorization": ""})
        assert status == 401 and body["error"]["message"] == "missing API key for this Suture proxy"
        assert len(upstream.handshakes) == before
        with open_socket(base, headers={"Authorization": f"Bearer {CLIENT_KEY}"}) as ws:
            ws.send("authorization?")
            # Suture's key went upstream; the upstream quoting it back gets it masked.
            assert ws.recv(timeout=10) == "Bearer " + "*" * len(UPSTREAM_KEY)
    assert upstream.handshakes[-1]["authorization"] == f"Bearer {UPSTREAM_KEY}"


def test_headers_subprotocols_and_binary_frames_pass_as_on_http(probe: tuple[Probe, str]) -> None:
    upstream, url = probe
    with suture(openai={"upstream": url + "/v1"}) as base:
        extra = {"x-custom": "kept", "OpenAI-Beta": "responses_websockets=2026-02-04"}
        with open_socket(base, headers=extra, subprotocols=["codex.v1"]) as ws:
            client_key = ws.request.headers["Sec-WebSocket-Key"] if ws.request is not None else ""
            assert ws.subprotocol == "codex.v1"
            answered = ws.response.headers if ws.response is not None else {}
            # The upstream's own handshake headers reach the client (Codex reads x-codex-turn-state), its
            # request id unchanged; Suture adds its own id, and no upstream sets Suture's headers.
            assert answered["x-codex-turn-state"] == "turn-1" and answered["x-request-id"] == "req_upstream_1"
            assert answered["x-suture-repairs"] == "0" and answered["x-suture-request-id"]
            ws.send("authorization?")
            assert ws.recv(timeout=10) == f"Bearer {KEY}"  # the client's own key passes through
            ws.send(b"\x00\x01binary\xff")
            assert ws.recv(timeout=10) == b"\xffyranib\x01\x00"
            ws.send("text stays text")
            assert ws.recv(timeout=10) == "text stays text"
    handshake = upstream.handshakes[-1]
    assert handshake["x-custom"] == "kept" and handshake["openai-beta"] == "responses_websockets=2026-02-04"
    assert handshake["sec-websocket-key"] != client_key  # a handshake of Suture's own with the upstream
    assert handshake["host"] == url.removeprefix("http://")


# ---------------------------------------------------------------------------------------- refusals


def test_a_cross_site_origin_is_refused(stack: Stack, logs: LogLines) -> None:
    before = len(stack.requests())
    with pytest.raises(InvalidStatus) as info:
        open_socket(stack.suture, origin="https://attacker.example")
    assert info.value.response.status_code == 403
    # Said, in the answer and in the access log, as an HTTP request's refusal is.
    assert b"allowed_origins" in info.value.response.body
    refused_id = info.value.response.headers["x-suture-request-id"]
    wait_for(lambda: bool(logs.records("suture.access", "request", request_id=refused_id)))
    [line] = logs.records("suture.access", "request", request_id=refused_id)
    assert (line["status"], line["outcome"]) == (403, "refused_browser")
    # The same handshake without the page's Origin (an agent's) is relayed.
    with open_socket(stack.suture) as ws:
        ws.send(json.dumps(CLEAN))
        assert answer(ws)[-1]["type"] == "response.completed"
    assert len(stack.requests()) == before + 1


def test_an_upstream_without_websockets_gets_426_at_once(logs: LogLines) -> None:
    with running_server(EchoUpstream().app()) as echo, suture(openai={"upstream": echo + "/v1"}) as base:
        started = time.monotonic()
        status, body, _ = refused(base)
        assert time.monotonic() - started < 2
    assert status == 426
    assert body["error"]["message"].startswith("Suture cannot relay this WebSocket, use HTTPS (POST /v1/responses)")
    assert "answered the handshake with 403" in body["error"]["message"]
    [line] = logs.records("suture.upstream", level="warning")
    assert line["event"] == "WebSocket refused; the client is told to use HTTPS (426)"
    [access] = wait_for(lambda: logs.records("suture.access", "request", status=426))
    assert access["upstream_status"] == 403 and access["outcome"] == "websocket_fallback"


def test_model_routes_to_another_upstream_get_426(stack: Stack) -> None:
    upstreams = {"other": {"protocol": "openai", "base_url": stack.emulator + "/v1"}}
    routes = [{"match": "gpt-5*", "upstream": "other"}]
    with suture(openai={"upstream": stack.emulator + "/v1"}, upstreams=upstreams, routes=routes) as base:
        status, body, _ = refused(base)
    assert status == 426 and "routes setting" in body["error"]["message"] and "(other)" in body["error"]["message"]


def test_an_unreachable_upstream_is_a_502_not_a_fallback() -> None:
    with suture(openai={"upstream": f"http://127.0.0.1:{free_port()}/v1"}) as base:
        status, body, _ = refused(base)
    assert status == 502 and body["error"]["message"].startswith("Suture could not reach the upstream")


# ---------------------------------------------------------------------------------------- egress


def test_the_egress_proxy_tunnels_the_websocket(stack: Stack) -> None:
    tunnel = TunnelProxy(require_authorization=b"Basic dXNlcjpzM2NyM3Q=")  # user:s3cr3t
    with tunnel.running() as proxy_url:
        authority = proxy_url.removeprefix("http://")
        with (
            suture(
                openai={"upstream": stack.emulator + "/v1"}, upstream_proxy=f"http://user:s3cr3t@{authority}"
            ) as base,
            open_socket(base) as ws,
        ):
            ws.send(json.dumps(BROKEN))
            assert answer(ws)[-1]["type"] == "response.completed"
        # A proxy that will not tunnel (here: no credentials, 407) is a fallback to HTTPS too.
        with suture(openai={"upstream": stack.emulator + "/v1"}, upstream_proxy=proxy_url) as base:
            status, body, _ = refused(base)
    assert (
        status == 426 and "the egress proxy (upstream_proxy) refused to tunnel to it (407)" in body["error"]["message"]
    )
    emulator_authority = stack.emulator.removeprefix("http://").encode()
    assert any(head.startswith(b"CONNECT " + emulator_authority) for head in tunnel.heads)


def test_an_https_upstream_is_verified_against_upstream_ca_file(tmp_path: Path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    key_file, chain_file, ca_file = tmp_path / "key.pem", tmp_path / "chain.pem", tmp_path / "ca.pem"
    cert.private_key_pem.write_to_path(str(key_file))
    cert.cert_chain_pems[0].write_to_path(str(chain_file))
    ca.cert_pem.write_to_path(str(ca_file))
    app = build_emulator_app(EmulatorConfig(provider="openai"))
    with running_server(app, ssl_certfile=str(chain_file), ssl_keyfile=str(key_file)) as https:
        with suture(openai={"upstream": https + "/v1"}, upstream_ca_file=ca_file) as base, open_socket(base) as ws:
            ws.send(json.dumps(BROKEN))
            assert answer(ws)[-1]["type"] == "response.completed"
        # Without the CA, the upstream's certificate is not trusted: a 502 that says so.
        with suture(openai={"upstream": https + "/v1"}) as base:
            status, body, _ = refused(base)
    assert status == 502 and "SSLCertVerificationError" in body["error"]["message"]


def _close(entry: dict[str, Any]) -> dict[str, Any]:
    return {"code": entry["code"], "reason": entry["reason"]}
