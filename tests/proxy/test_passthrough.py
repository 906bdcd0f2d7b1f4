"""Every other request under a provider's API passes through: the official SDKs, pointed at Suture
as their base URL, embed, upload and download files, poll a stored response, list models, batch
messages and embed with Gemini, through a real Suture in front of a fake provider that records
what arrives. Credentials follow each provider's section as on the repaired routes; uploads larger
than ``max_body_bytes`` stream through (the limit is for bodies Suture parses), and so do large
downloads.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import anthropic
import httpx
import openai
import pytest
from google import genai
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

CLIENT_KEY = "suture-client-key-pass-7e1f"
UPSTREAM_KEY = "sk-suture-own-openai-key-4c2d"
LIMIT = 64 * 1024
DOWNLOAD = bytes(range(256)) * (4 * 4096)  # 4 MiB


@dataclass
class Arrived:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    size: int
    sha256: str


@dataclass
class FakeProvider:
    """Answers what the SDKs call besides transcripts, in each API's own shape, and records each
    request (its body hashed as it streams in, never held)."""

    arrived: list[Arrived] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def record(self, request: Request) -> Arrived:
        digest, size = hashlib.sha256(), 0
        async for chunk in request.stream():
            digest.update(chunk)
            size += len(chunk)
        seen = Arrived(
            request.method, request.url.path, request.url.query, dict(request.headers), size, digest.hexdigest()
        )
        with self.lock:
            self.arrived.append(seen)
        return seen

    async def handle(self, request: Request) -> Response:
        seen = await self.record(request)
        path = seen.path
        if path.endswith(":batchEmbedContents"):
            return JSONResponse({"embeddings": [{"values": [0.25, 0.5]}]})
        if path.endswith(":embedContent"):
            return JSONResponse({"embedding": {"values": [0.25, 0.5]}})
        if path == "/v1/embeddings":
            vector = {"object": "embedding", "index": 0, "embedding": [0.25, 0.5]}
            usage = {"prompt_tokens": 2, "total_tokens": 2}
            return JSONResponse({"object": "list", "data": [vector], "model": "e", "usage": usage})
        if path == "/v1/files" and seen.method == "POST":
            return JSONResponse(
                {
                    "id": "file-abc",
                    "object": "file",
                    "bytes": seen.size,
                    "created_at": 0,
                    "filename": "notes.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                }
            )
        if path == "/v1/files/file-abc/content":

            async def body() -> AsyncIterator[bytes]:
                for start in range(0, len(DOWNLOAD), 65536):
                    yield DOWNLOAD[start : start + 65536]

            return StreamingResponse(body(), media_type="application/octet-stream")
        if path.startswith("/v1/responses/"):
            return JSONResponse(
                {
                    "id": path.rsplit("/", 1)[1],
                    "object": "response",
                    "created_at": 0,
                    "model": "gpt-4.1",
                    "status": "completed",
                    "output": [],
                    "parallel_tool_calls": True,
                    "tool_choice": "auto",
                    "tools": [],
                }
            )
        if path.startswith("/v1/models/"):
            return JSONResponse({"id": path.rsplit("/", 1)[1], "object": "model", "created": 0, "owned_by": "x"})
        if path == "/v1/messages/batches":
            batch = {
                "id": "msgbatch_01",
                "type": "message_batch",
                "processing_status": "in_progress",
                "request_counts": {"processing": 1, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0},
                "created_at": "2026-12-01T00:00:00Z",
                "expires_at": "2026-12-02T00:00:00Z",
                "ended_at": None,
                "cancel_initiated_at": None,
                "archived_at": None,
                "results_url": None,
            }
            if seen.method == "POST":
                return JSONResponse(batch)
            return JSONResponse(
                {"data": [batch], "has_more": False, "first_id": "msgbatch_01", "last_id": "msgbatch_01"}
            )
        return JSONResponse({"error": {"message": f"fake provider: no {seen.method} {path}"}}, status_code=404)

    def app(self) -> Starlette:
        methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
        return Starlette(routes=[Route("/{path:path}", self.handle, methods=methods)])

    def since(self, count: int) -> list[Arrived]:
        with self.lock:
            return self.arrived[count:]


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[FakeProvider, str]]:
    fake = FakeProvider()
    with running_server(fake.app()) as url:
        yield fake, url


@pytest.fixture(scope="module")
def proxy(provider: tuple[FakeProvider, str]) -> Iterator[str]:
    _, url = provider
    with suture(
        openai={"upstream": url + "/v1", "upstream_api_key": UPSTREAM_KEY, "client_api_key": CLIENT_KEY},
        anthropic={"upstream": url},
        gemini={"upstream": url},
        max_body_bytes=LIMIT,
    ) as base:
        yield base


def openai_client(proxy: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy + "/v1", api_key=CLIENT_KEY, max_retries=0, timeout=20)


def only(fake: FakeProvider, before: int) -> Arrived:
    arrived = fake.since(before)
    assert len(arrived) == 1, arrived
    return arrived[0]


def test_embeddings_pass_through_with_the_section_s_own_key(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    before = len(fake.arrived)
    raw = openai_client(proxy).embeddings.with_raw_response.create(model="text-embedding-3-small", input="hello")
    assert raw.parse().data[0].embedding == [0.25, 0.5]
    assert raw.headers["x-suture-repairs"] == "0" and raw.headers["x-suture-request-id"]
    seen = only(fake, before)
    assert (seen.method, seen.path) == ("POST", "/v1/embeddings")
    # The same policy as the repaired routes: Suture's key upstream, the client's key for Suture never.
    assert seen.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert CLIENT_KEY not in json.dumps(seen.headers)


def test_a_wrong_client_key_is_refused_before_anything_passes(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    before = len(fake.arrived)
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="not-the-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.embeddings.create(model="text-embedding-3-small", input="hello")
    assert fake.since(before) == []


def test_a_file_larger_than_the_body_limit_uploads_in_a_stream(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    content = b'{"custom_id": "1"}\n' * (3 * LIMIT // 19)  # three times max_body_bytes
    before = len(fake.arrived)
    uploaded = openai_client(proxy).files.create(file=("notes.jsonl", content), purpose="batch")
    assert uploaded.id == "file-abc"
    seen = only(fake, before)
    assert seen.headers["content-type"].startswith("multipart/form-data")
    assert seen.size > len(content) > LIMIT  # the whole multipart body, written upstream as it came
    assert seen.headers.get("transfer-encoding") == "chunked"
    assert uploaded.bytes == seen.size


def test_a_small_upload_keeps_its_length(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    before = len(fake.arrived)
    openai_client(proxy).files.create(file=("notes.jsonl", b'{"custom_id": "1"}\n'), purpose="batch")
    seen = only(fake, before)
    assert seen.headers["content-length"] == str(seen.size)


def test_a_large_download_streams_back_whole(proxy: str) -> None:
    content = openai_client(proxy).files.content("file-abc")
    assert hashlib.sha256(content.read()).hexdigest() == hashlib.sha256(DOWNLOAD).hexdigest()


def test_a_stored_response_and_a_model_are_retrieved(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    client = openai_client(proxy)
    before = len(fake.arrived)
    assert client.responses.retrieve("resp_123").id == "resp_123"
    # GET /v1/models/{id} once met the Gemini route (POST only) and answered 405.
    assert client.models.retrieve("gpt-4.1").id == "gpt-4.1"
    assert [(a.method, a.path) for a in fake.since(before)] == [
        ("GET", "/v1/responses/resp_123"),
        ("GET", "/v1/models/gpt-4.1"),
    ]


def test_anthropic_message_batches_pass_through(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    client = anthropic.Anthropic(base_url=proxy, api_key="sk-ant-client-own-key", max_retries=0)
    before = len(fake.arrived)
    request = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    batch = client.messages.batches.create(requests=[{"custom_id": "1", "params": request}])  # type: ignore[list-item]
    assert batch.id == "msgbatch_01"
    assert [b.id for b in client.messages.batches.list()] == ["msgbatch_01"]
    arrived = fake.since(before)
    assert [(a.method, a.path) for a in arrived] == [("POST", "/v1/messages/batches"), ("GET", "/v1/messages/batches")]
    # No key of Suture's on this section: the client's own goes through, as on /v1/messages (this
    # SDK sends it as a Bearer token; older ones as x-api-key).
    sent = arrived[0].headers
    assert "sk-ant-client-own-key" in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))


def test_gemini_embeddings_pass_through(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    client = genai.Client(api_key="gemini-client-key", http_options=genai.types.HttpOptions(base_url=proxy))
    before = len(fake.arrived)
    result = client.models.embed_content(model="gemini-embedding-001", contents="hello")
    assert result.embeddings is not None and result.embeddings[0].values == [0.25, 0.5]
    seen = only(fake, before)
    assert seen.path.startswith(("/v1/models/gemini-embedding-001:", "/v1beta/models/gemini-embedding-001:"))
    assert seen.headers["x-goog-api-key"] == "gemini-client-key"


def test_with_passthrough_off_the_404_names_the_setting(provider: tuple[FakeProvider, str]) -> None:
    fake, url = provider
    with (
        suture(openai={"upstream": url + "/v1"}, passthrough=False) as base,
        openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0) as client,
    ):
        before = len(fake.arrived)
        with pytest.raises(openai.NotFoundError) as caught:
            client.embeddings.create(model="text-embedding-3-small", input="hello")
        assert "(passthrough: false)" in str(caught.value)
        assert fake.since(before) == []
        # Its own endpoints are unchanged: GET /v1/models still reaches the provider.
        before = len(fake.arrived)
        httpx.get(base + "/v1/models")
        assert [(a.method, a.path) for a in fake.since(before)] == [("GET", "/v1/models")]


def test_pass_through_requests_are_counted_under_one_label(proxy: str) -> None:
    metrics = httpx.get(proxy + "/metrics").text
    assert 'suture_requests_total{method="POST",model="",route="passthrough",status="200",upstream="openai"}' in metrics
    assert "/v1/embeddings" not in metrics  # paths are the client's to choose: no label per path


def test_a_base_url_without_v1_or_with_it_twice_gets_a_hint(provider: tuple[FakeProvider, str], proxy: str) -> None:
    fake, _ = provider
    before = len(fake.arrived)
    chat = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
    with (
        openai.OpenAI(base_url=proxy, api_key=CLIENT_KEY, max_retries=0) as client,
        pytest.raises(openai.NotFoundError) as missing,
    ):
        client.chat.completions.create(**chat)  # type: ignore[call-overload]
    assert f"OpenAI clients: base_url must end in /v1, e.g. {proxy}/v1" in str(missing.value)
    with (
        anthropic.Anthropic(base_url=proxy + "/v1", api_key="sk-ant-k", max_retries=0) as client,
        pytest.raises(anthropic.NotFoundError) as doubled,
    ):
        client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert f"Anthropic clients: base_url has no /v1 ({proxy})" in str(doubled.value)
    assert fake.since(before) == []  # neither was relayed


def test_an_upstream_404_on_a_path_suture_built_names_the_setting_to_check(
    provider: tuple[FakeProvider, str],
) -> None:
    _, url = provider
    chat = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
    # A base URL without its /v1: Suture's /chat/completions lands where the provider has nothing.
    with (
        suture(openai={"upstream": url}) as base,
        openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0) as client,
        pytest.raises(openai.NotFoundError) as caught,
    ):
        client.chat.completions.create(**chat)  # type: ignore[call-overload]
    hint = caught.value.response.headers["x-suture-hint"]
    assert hint == f"the upstream answered 404 to {url}/chat/completions: check openai.upstream"
