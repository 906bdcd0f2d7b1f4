"""End to end for OpenAI Responses, Gemini and Bedrock Converse: SDK -> Suture -> strict emulator.

Each format's seed (the user asks, the model calls `slow_tool`, the agent appends its interrupt
recovery message, the user corrects; no tool result) is rejected by the emulator when sent
directly and answered with 200 through Suture, streaming and not.

Bedrock: boto3 clients send Suture's client key as ``x-api-key`` from a ``before-sign`` event
hook (boto3's own bearer auth, ``AWS_BEARER_TOKEN_BEDROCK``, refuses plain-http endpoints; plain
HTTP clients may send ``Authorization: Bearer``), and Suture signs the forwarded request with its
own AWS credentials. The emulator answers 403 to anything not SigV4-signed, so a 200 through
Suture shows Suture signed it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import openai
import orjson
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import ClientError
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from proxy.app import build_app
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import ConfigError, Settings
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.seed_transcripts import (
    BEDROCK_TOOL_CONFIG,
    CORRECTION,
    GEMINI_TOOLS,
    RECOVERY,
    RESPONSES_TOOLS,
    bedrock_repaired,
    bedrock_seed,
    gemini_repaired,
    gemini_seed,
    responses_seed,
)
from tests._support.servers import running_server

OPENAI_KEY = "sk-openai-canary-0123456789"
GOOGLE_KEY = "AIza-google-canary-0123456789"
CLIENT_KEY = "suture-client-canary-0123456789"
# Suture's own AWS identity (fake) and the client's, which must never reach the upstream.
SUTURE_AWS = ("AKIDSUTURE0000000000", "suture-aws-secret-canary")
CLIENT_AWS = ("AKIDCLIENT0000000000", "client-aws-secret-canary")
GEMINI_MODEL = "gemini-2.5-flash"
BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
REPLY = f'Emulated reply. Last user text: "{CORRECTION}"'


@pytest.fixture(autouse=True)
def _aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Suture's credentials come from the environment; nothing from the developer's ~/.aws."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", SUTURE_AWS[0])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SUTURE_AWS[1])


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def requests(self) -> list[dict[str, Any]]:
        return recorded_requests(self.record)

    def openai(self, *, direct: bool = False) -> openai.OpenAI:
        base = self.emulator if direct else self.suture
        return openai.OpenAI(base_url=base + "/v1", api_key=OPENAI_KEY, max_retries=0, timeout=10)

    def gemini(self, *, direct: bool = False) -> genai.Client:
        base = self.emulator if direct else self.suture
        return genai.Client(api_key=GOOGLE_KEY, http_options=genai_types.HttpOptions(base_url=base, timeout=10_000))

    def bedrock(self, *, direct: bool = False, key: str | None = CLIENT_KEY) -> Any:
        """boto3's bedrock-runtime client, SigV4-signing with the client's own (fake) credentials;
        through Suture it adds ``key`` as ``x-api-key``."""
        config = Config(signature_version="v4", retries={"total_max_attempts": 1}, read_timeout=10)
        client = boto3.client(
            "bedrock-runtime",
            region_name="us-east-1",
            endpoint_url=self.emulator if direct else self.suture,
            aws_access_key_id=CLIENT_AWS[0],
            aws_secret_access_key=CLIENT_AWS[1],
            config=config,
        )
        if not direct and key is not None:

            def add_key(request: Any, **_: Any) -> None:
                request.headers["x-api-key"] = key

            client.meta.events.register("before-sign.bedrock-runtime.*", add_key)
        return client


@contextlib.contextmanager
def stack(tmp_path: Path, **settings: Any) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app, timeout_graceful_shutdown=1) as emu:
        bedrock = {"upstream": emu, "enabled": True, "client_api_key": CLIENT_KEY, **settings.pop("bedrock", {})}
        gemini = {"upstream": emu, **settings.pop("gemini", {})}
        with suture(openai={"upstream": emu + "/v1"}, gemini=gemini, bedrock=bedrock, **settings) as url:
            yield Stack(emu, record, url)


@pytest.fixture
def repairing(tmp_path: Path) -> Iterator[Stack]:
    with stack(tmp_path) as s:
        yield s


# --- OpenAI Responses --------------------------------------------------------------------------


def assert_responses_repaired(items: list[dict[str, Any]]) -> None:
    assert [i.get("type", "message") for i in items] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
        "message",
    ]
    assert items[2]["call_id"] == "call_slow_1"
    assert "slow_tool" in items[2]["output"]
    assert items[3]["content"] == RECOVERY
    assert items[4]["content"] == CORRECTION


def test_responses_seed_400_direct_200_through_suture(repairing: Stack, logs: LogLines) -> None:
    body = {"model": "gpt-4.1", "input": responses_seed(), "tools": RESPONSES_TOOLS}
    with repairing.openai(direct=True) as direct, pytest.raises(openai.BadRequestError) as info:
        direct.responses.create(**body)
    assert "No tool output found for function call call_slow_1" in str(info.value)

    with repairing.openai() as client:
        raw = client.responses.with_raw_response.create(**body)
        assert raw.headers["x-suture-repairs"] == "1"
        assert raw.parse().output_text == REPLY
        with client.responses.stream(**body) as stream:
            assert stream.get_final_response().output_text == REPLY
        with client.responses.create(**body, stream=True) as events:
            kinds = [e.type for e in events]
        assert kinds[-1] == "response.completed"

    direct_call, *forwarded = repairing.requests()
    assert direct_call["status"] == 400
    assert len(forwarded) == 3
    for got in forwarded:
        assert (got["path"], got["status"]) == ("/v1/responses", 200)
        assert_responses_repaired(got["body"]["input"])
    assert [got["body"].get("stream") for got in forwarded] == [None, True, True]
    repairs = wait_for(lambda: logs.records("suture.repair", "repair"))
    assert (repairs[0]["code"], repairs[0]["tool_call_id"]) == ("TP001", "call_slow_1")
    assert repairs[0]["request_id"] == raw.headers["x-suture-request-id"]


def test_responses_string_input_passes_byte_identical(repairing: Stack) -> None:
    raw = json.dumps({"model": "gpt-4.1", "input": "Hello   there"}, indent=2).encode()
    response = httpx.post(
        repairing.suture + "/v1/responses",
        content=raw,
        headers={"authorization": f"Bearer {OPENAI_KEY}", "content-type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert response.headers["x-suture-repairs"] == "0"
    [got] = repairing.requests()
    assert got["raw_sha256"] == hashlib.sha256(raw).hexdigest()


# --- Gemini ------------------------------------------------------------------------------------


def gemini_config() -> genai_types.GenerateContentConfig:
    return genai_types.GenerateContentConfig(tools=GEMINI_TOOLS)


def assert_gemini_repaired(contents: list[dict[str, Any]]) -> None:
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    [part] = contents[2]["parts"]
    assert part["functionResponse"]["name"] == "slow_tool"
    assert contents[3]["parts"] == [{"text": RECOVERY}]
    assert contents[4]["parts"] == [{"text": CORRECTION}]


def test_gemini_seed_400_direct_200_through_suture(repairing: Stack) -> None:
    args: dict[str, Any] = {"model": GEMINI_MODEL, "contents": gemini_seed(), "config": gemini_config()}
    with repairing.gemini(direct=True) as direct, pytest.raises(genai_errors.ClientError) as info:
        direct.models.generate_content(**args)
    assert (info.value.code, info.value.status) == (400, "INVALID_ARGUMENT")

    with repairing.gemini() as client:
        assert client.models.generate_content(**args).text == REPLY
        chunks = list(client.models.generate_content_stream(**args))
        assert "".join(c.text or "" for c in chunks) == REPLY
        assert len(chunks) > 1
        assert chunks[0].sdk_http_response is not None and chunks[0].sdk_http_response.headers is not None
        headers = chunks[0].sdk_http_response.headers
        assert headers["x-suture-repairs"] == "1"
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["x-accel-buffering"] == "no"

    direct_call, plain, streamed = repairing.requests()
    assert direct_call["status"] == 400
    assert (plain["path"], plain["status"]) == (f"/v1/models/{GEMINI_MODEL}:generateContent", 200)
    assert (streamed["path"], streamed["status"]) == (f"/v1/models/{GEMINI_MODEL}:streamGenerateContent", 200)
    for got in (plain, streamed):
        assert_gemini_repaired(got["body"]["contents"])
        assert got["headers"]["x-goog-api-key"] == "REDACTED"  # passed through (the record redacts it)


def test_gemini_key_in_query_and_v1beta_paths_pass_through(repairing: Stack) -> None:
    body = {"contents": gemini_repaired(), "tools": GEMINI_TOOLS}
    raw = json.dumps(body, indent=1).encode()
    url = f"{repairing.suture}/v1beta/models/{GEMINI_MODEL}:streamGenerateContent"
    with httpx.stream(
        "POST", url, params={"alt": "sse", "key": GOOGLE_KEY}, content=raw, headers={"content-type": "application/json"}
    ) as response:
        assert response.status_code == 200
        text = response.read().decode()
    assert text.startswith("data: ") and text.count("data: ") > 1
    assert '"finishReason":"STOP"' in text
    [got] = repairing.requests()
    assert got["raw_sha256"] == hashlib.sha256(raw).hexdigest()
    assert got["path"] == f"/v1beta/models/{GEMINI_MODEL}:streamGenerateContent"


def test_gemini_bad_model_id_is_a_google_404_and_other_methods_pass_through(repairing: Stack) -> None:
    response = httpx.post(
        repairing.suture + "/v1beta/models/..:generateContent", json={}, headers={"x-goog-api-key": GOOGLE_KEY}
    )
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"
    assert repairing.requests() == []
    # embedContent is not repaired: it reaches the upstream as it is (the emulator serves no such method).
    path = f"/v1beta/models/{GEMINI_MODEL}:embedContent"
    httpx.post(repairing.suture + path, json={}, headers={"x-goog-api-key": GOOGLE_KEY})
    assert [r["path"] for r in repairing.requests()] == [path]


def test_gemini_suture_holds_the_key(tmp_path: Path) -> None:
    with stack(tmp_path, gemini={"upstream_api_key": "AIza-suture-own", "client_api_key": CLIENT_KEY}) as s:
        # The client's key for Suture arrives as ?key=; it must not travel on.
        url = f"{s.suture}/v1/models/{GEMINI_MODEL}:generateContent"
        body = {"contents": gemini_repaired()}
        assert httpx.post(url, params={"key": CLIENT_KEY}, json=body).status_code == 200
        denied = httpx.post(url, params={"key": "wrong"}, json=body)
        assert denied.status_code == 401
        assert denied.json()["error"]["status"] == "UNAUTHENTICATED"
        [got] = s.requests()
        assert got["headers"]["x-goog-api-key"] == "REDACTED"


# --- Bedrock Converse --------------------------------------------------------------------------


def converse_text(response: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in response["output"]["message"]["content"])


def stream_text(response: dict[str, Any]) -> str:
    events = response["stream"]
    return "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e)


def assert_bedrock_repaired(messages: list[dict[str, Any]]) -> None:
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    [block] = messages[2]["content"]
    assert block["toolResult"]["toolUseId"] == "tooluse_slow_1"
    assert block["toolResult"]["status"] == "error"
    assert messages[3]["content"] == [{"text": RECOVERY}]


def test_bedrock_seed_400_direct_200_through_suture(repairing: Stack) -> None:
    args: dict[str, Any] = {"modelId": BEDROCK_MODEL, "messages": bedrock_seed(), "toolConfig": BEDROCK_TOOL_CONFIG}
    direct = repairing.bedrock(direct=True)
    with pytest.raises(ClientError) as info:
        direct.converse(**args)
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400

    client = repairing.bedrock()
    plain = client.converse(**args)
    assert converse_text(plain) == REPLY
    assert plain["ResponseMetadata"]["HTTPHeaders"]["x-suture-repairs"] == "1"
    streamed = client.converse_stream(**args)
    assert streamed["ResponseMetadata"]["HTTPHeaders"]["content-type"] == "application/vnd.amazon.eventstream"
    assert stream_text(streamed) == REPLY

    direct_call, *forwarded = repairing.requests()
    assert direct_call["status"] == 400
    paths = [got["path"] for got in forwarded]
    assert paths == [f"/model/{BEDROCK_MODEL}/converse", f"/model/{BEDROCK_MODEL}/converse-stream"]
    for got in forwarded:
        assert got["status"] == 200
        assert_bedrock_repaired(got["body"]["messages"])
        headers = got["headers"]
        # Signed by Suture (the emulator answers 403 otherwise); the client's key stays behind.
        assert "x-api-key" not in headers
        assert "x-amz-date" in headers
        assert "x-amz-security-token" not in headers


def test_bedrock_llama_turn_with_text_next_to_its_call_is_split_through_suture(repairing: Stack) -> None:
    """Llama on Bedrock refuses text next to a toolUse (Claude takes it): the model is only in the
    URL, and Suture reads it there."""
    llama = "us.meta.llama3-2-11b-instruct-v1:0"
    use = {"toolUse": {"toolUseId": "tooluse_llama_1", "name": "get_weather", "input": {"city": "Paris"}}}
    messages = [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {"role": "assistant", "content": [{"text": "Let me check."}, use]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_llama_1", "content": [{"text": "18C"}]}}]},
        {"role": "assistant", "content": [{"text": "It is 18C."}]},
        {"role": "user", "content": [{"text": CORRECTION}]},
    ]
    args: dict[str, Any] = {"modelId": llama, "messages": messages, "toolConfig": BEDROCK_TOOL_CONFIG}
    with pytest.raises(ClientError) as info:
        repairing.bedrock(direct=True).converse(**args)
    assert info.value.response["Error"]["Message"] == (
        "messages.1.content: Conversation blocks and tool use blocks cannot be provided in the same turn."
    )

    answer = repairing.bedrock().converse(**args)
    assert converse_text(answer) == REPLY
    assert answer["ResponseMetadata"]["HTTPHeaders"]["x-suture-repairs"] == "1"
    # The same turn is Claude's to take as it is: forwarded untouched.
    claude = repairing.bedrock().converse(**{**args, "modelId": BEDROCK_MODEL})
    assert claude["ResponseMetadata"]["HTTPHeaders"]["x-suture-repairs"] == "0"

    _, split, untouched = repairing.requests()
    sent = split["body"]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"] == [{"text": "Let me check."}]
    assert sent[2]["content"] == [{"text": "Continue."}]
    assert sent[3]["content"] == [use]
    assert untouched["body"]["messages"] == messages


def test_bedrock_needs_the_client_key(repairing: Stack) -> None:
    # A client's own valid SigV4 signature is no key to Suture.
    for key in (None, "wrong-key"):
        with pytest.raises(ClientError) as info:
            repairing.bedrock(key=key).converse(
                modelId=BEDROCK_MODEL, messages=bedrock_repaired(), toolConfig=BEDROCK_TOOL_CONFIG
            )
        assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 401
        assert info.value.response["Error"]["Code"] == "UnrecognizedClientException"
    assert repairing.requests() == []


def test_bedrock_route_is_off_unless_enabled(tmp_path: Path) -> None:
    with suture() as url:
        response = httpx.post(f"{url}/model/{BEDROCK_MODEL}/converse", json={"messages": []})
    assert response.status_code == 404
    assert response.headers["x-amzn-errortype"] == "ResourceNotFoundException"


def test_bedrock_enabled_without_a_client_key_or_credentials_will_not_start(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="enabled needs client_api_key"):
        Settings(bedrock={"enabled": True})
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ConfigError, match="no AWS credentials were found"):
        build_app(Settings(bedrock={"enabled": True, "client_api_key": CLIENT_KEY}))


def test_bedrock_signature_covers_the_bytes_and_path_sent(tmp_path: Path) -> None:
    """Recompute SigV4 from what the upstream received, with Suture's secret: it must match."""
    received: list[dict[str, Any]] = []

    async def record(request: Request) -> Response:
        received.append(
            {
                "method": request.method,
                "raw_path": request.scope["raw_path"].decode(),
                "headers": dict(request.headers),
                "body": await request.body(),
            }
        )
        return JSONResponse({"output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}}})

    upstream = Starlette(routes=[Route("/{path:path}", record, methods=["POST"])])
    # A transcript needing repair: the forwarded bytes are Suture's, not the client's.
    body = orjson.dumps({"messages": bedrock_seed(), "toolConfig": BEDROCK_TOOL_CONFIG})
    with (
        running_server(upstream) as up,
        suture(bedrock={"upstream": up, "enabled": True, "client_api_key": CLIENT_KEY, "region": "eu-west-1"}) as url,
    ):
        path = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
        response = httpx.post(
            url + path,
            content=body,
            headers={
                "authorization": f"Bearer {CLIENT_KEY}",
                "content-type": "application/json",
                "x-amz-date": "20200101T000000Z",
                "x-amz-security-token": "client-token-canary",
            },
        )
        assert response.status_code == 200, response.text
    [got] = received
    assert got["raw_path"] == path  # the model id's ':' still escaped, as signed
    assert got["body"] != body and b"toolResult" in got["body"]
    headers = got["headers"]
    assert "x-amz-security-token" not in headers
    assert headers["x-amz-date"] != "20200101T000000Z"
    authorization = headers["authorization"]
    assert authorization.startswith(f"AWS4-HMAC-SHA256 Credential={SUTURE_AWS[0]}/")
    assert "/eu-west-1/bedrock/aws4_request" in authorization
    assert "SignedHeaders=content-type;host;x-amz-date," in authorization

    signed = {k: headers[k] for k in ("host", "content-type", "x-amz-date")}
    request = AWSRequest(method="POST", url=up + got["raw_path"], data=got["body"], headers=signed)
    request.context["timestamp"] = headers["x-amz-date"]
    auth = SigV4Auth(ReadOnlyCredentials(SUTURE_AWS[0], SUTURE_AWS[1], None), "bedrock", "eu-west-1")
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    assert authorization.endswith(f"Signature={expected}")


# --- Strict mode, metrics ----------------------------------------------------------------------


def test_strict_mode_answers_in_each_providers_shape(tmp_path: Path) -> None:
    with stack(tmp_path, mode="strict") as s:
        with s.openai() as client, pytest.raises(openai.BadRequestError) as oinfo:
            client.responses.create(model="gpt-4.1", input=responses_seed(), tools=RESPONSES_TOOLS)
        assert "Suture's strict mode refused this request" in str(oinfo.value)
        with s.gemini() as gclient, pytest.raises(genai_errors.ClientError) as ginfo:
            gclient.models.generate_content(model=GEMINI_MODEL, contents=gemini_seed(), config=gemini_config())
        assert (ginfo.value.code, ginfo.value.status) == (400, "INVALID_ARGUMENT")
        assert "Suture's strict mode" in str(ginfo.value)
        with pytest.raises(ClientError) as binfo:
            s.bedrock().converse(modelId=BEDROCK_MODEL, messages=bedrock_seed(), toolConfig=BEDROCK_TOOL_CONFIG)
        assert binfo.value.response["Error"]["Code"] == "ValidationException"
        assert "bedrock.B1" in str(binfo.value)
        assert s.requests() == []


def test_metrics_label_templated_routes_and_no_secrets_logged(repairing: Stack, logs: LogLines) -> None:
    with repairing.gemini() as client:
        client.models.generate_content(model=GEMINI_MODEL, contents=gemini_seed(), config=gemini_config())
    repairing.bedrock().converse(modelId=BEDROCK_MODEL, messages=bedrock_seed(), toolConfig=BEDROCK_TOOL_CONFIG)
    metrics = httpx.get(repairing.suture + "/metrics").text
    assert 'route="/v1/models/{rest:path}"' in metrics
    assert 'route="/model/{model_id:path}/converse"' in metrics
    assert 'suture_upstream_responses_total{status="200",upstream="bedrock"} 1.0' in metrics
    assert 'suture_upstream_responses_total{status="200",upstream="gemini"} 1.0' in metrics
    access = wait_for(lambda: len(logs.records("suture.access", "request")) >= 2 and logs.records("suture.access"))
    assert all(a["repairs_applied"] == 1 for a in access if a["path"] != "/metrics")
    for line in logs.lines:
        assert "canary" not in line


def test_bedrock_invoke_passes_through_signed_with_suture_s_credentials() -> None:
    """Bedrock's other methods pass through as converse does: the client's signature and key for
    Suture never leave, Suture signs what it sends, and the body goes on as the client sent it."""
    received: list[dict[str, Any]] = []

    async def record(request: Request) -> Response:
        received.append({"raw_path": request.scope["raw_path"].decode(), "headers": dict(request.headers)})
        received[-1]["body"] = await request.body()
        return JSONResponse({"content": [{"type": "text", "text": "ok"}]})

    upstream = Starlette(routes=[Route("/{path:path}", record, methods=["POST"])])
    body = orjson.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 8, "messages": []})
    with (
        running_server(upstream) as up,
        suture(bedrock={"upstream": up, "enabled": True, "client_api_key": CLIENT_KEY}) as url,
    ):
        path = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke"
        headers = {"authorization": f"Bearer {CLIENT_KEY}", "content-type": "application/json"}
        response = httpx.post(url + path, content=body, headers=headers)
        assert response.status_code == 200, response.text
        refused = httpx.post(url + path, content=body, headers={"content-type": "application/json"})
        assert refused.status_code == 401  # the section's client key guards its pass-through too
    [got] = received
    assert (got["raw_path"], got["body"]) == (path, body)
    assert got["headers"]["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={SUTURE_AWS[0]}/")
    assert CLIENT_KEY not in str(got["headers"])
