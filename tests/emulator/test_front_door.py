"""The emulator as a newcomer meets it: every API on one port, any key, ``models.list()`` in the
client's own shape, OpenAI's embeddings and files (alone and through Suture's pass-through), and
the banner ``suture emulate`` prints."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from proxy import cli
from proxy.emulator import EmulatorConfig, banner, build_emulator_app
from proxy.emulator.app import ANTHROPIC_MISSING_KEY, DIALECTS
from tests._support.emulator import Emulator, bedrock_client, recorded_requests
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

OPENAI_KEY = {"authorization": "Bearer sk-anything"}
ANTHROPIC_KEY = {"x-api-key": "anything", "anthropic-version": "2023-06-01"}
HI = [{"role": "user", "content": "hi"}]
REPLY = 'Emulated reply. Last user text: "hi"'


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """An emulator as ``suture emulate`` starts it without ``--provider``."""
    record = tmp_path_factory.mktemp("front") / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(record_path=record))
    with running_server(app) as url:
        yield Emulator(url, app, record)


@pytest.fixture(scope="module")
def oai(front: Emulator) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=front.url + "/v1", api_key="any-key-at-all", max_retries=0, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def claude(front: Emulator) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=front.url, api_key="any-key-at-all", max_retries=0, timeout=10) as client:
        yield client


# Every API on one port.


def test_every_api_answers_on_one_port(front: Emulator, oai: openai.OpenAI, claude: anthropic.Anthropic) -> None:
    chat = oai.chat.completions.create(model="gpt-4.1", messages=HI)  # type: ignore[arg-type]
    assert chat.choices[0].message.content == REPLY
    assert oai.responses.create(model="gpt-4.1", input="hi").output_text == REPLY
    message = claude.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=HI)  # type: ignore[arg-type]
    assert message.content[0].type == "text" and message.content[0].text == REPLY
    options = types.HttpOptions(base_url=front.url, timeout=10_000)
    with genai.Client(api_key="any-key", http_options=options) as google:
        assert google.models.generate_content(model="gemini-2.5-flash", contents="hi").text == REPLY
    converse = bedrock_client(front.url).converse(
        modelId="anthropic.claude-haiku-4-5", messages=[{"role": "user", "content": [{"text": "hi"}]}]
    )
    assert converse["output"]["message"]["content"][0]["text"] == REPLY
    with openai.OpenAI(base_url=front.url + "/deepseek/v1", api_key="k", max_retries=0) as deepseek:
        answer = deepseek.chat.completions.create(model="deepseek-chat", messages=HI)  # type: ignore[arg-type]
        assert answer.choices[0].message.content == REPLY


def test_a_missing_anthropic_key_is_refused_with_a_text_that_says_any_will_do(front: Emulator) -> None:
    body = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": HI}
    response = httpx.post(front.url + "/v1/messages", headers={"anthropic-version": "2023-06-01"}, json=body)
    assert response.status_code == 401
    assert response.json() == {
        "type": "error",
        "error": {"type": "authentication_error", "message": ANTHROPIC_MISSING_KEY},
    }
    assert ANTHROPIC_MISSING_KEY == "x-api-key header is required (the emulator accepts any value)"


def test_a_missing_openai_key_is_refused_and_the_text_says_any_will_do(front: Emulator) -> None:
    response = httpx.post(front.url + "/v1/chat/completions", json={"model": "gpt-4.1", "messages": HI})
    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert message.startswith("You didn't provide an API key.")
    assert message.endswith("(the emulator accepts any value)")


# models.list() in the client's own shape.


def test_openai_sdk_lists_gpt_models(oai: openai.OpenAI) -> None:
    models = list(oai.models.list())
    assert models and all(m.object == "model" and m.id.startswith(("gpt-", "text-embedding-")) for m in models)
    assert all(isinstance(m.created, int) and m.owned_by for m in models)
    assert oai.models.retrieve("gpt-4.1").id == "gpt-4.1"


def test_anthropic_sdk_lists_claude_models(claude: anthropic.Anthropic) -> None:
    page = claude.models.list()
    models = list(page)
    assert models and all(m.type == "model" and m.id.startswith("claude-") for m in models)
    assert page.first_id == models[0].id and page.last_id == models[-1].id and page.has_more is False
    assert {m.display_name for m in models} >= {"Claude Haiku 4.5"}
    retrieved = claude.models.retrieve("claude-sonnet-4-6")
    assert (retrieved.id, retrieved.display_name) == ("claude-sonnet-4-6", "Claude Sonnet 4.6")


def test_the_raw_listings_have_each_provider_s_fields(front: Emulator) -> None:
    listing = httpx.get(front.url + "/v1/models", headers=OPENAI_KEY).json()
    assert set(listing) == {"object", "data"} and listing["object"] == "list"
    assert set(listing["data"][0]) == {"id", "object", "created", "owned_by"}
    listing = httpx.get(front.url + "/v1/models", headers=ANTHROPIC_KEY).json()
    assert set(listing) == {"data", "has_more", "first_id", "last_id"}
    assert set(listing["data"][0]) == {"type", "id", "display_name", "created_at"}
    # An Anthropic OAuth client sends a Bearer token, with anthropic-version: still Anthropic's.
    oauth = {"authorization": "Bearer t", "anthropic-version": "2023-06-01"}
    assert "has_more" in httpx.get(front.url + "/v1/models", headers=oauth).json()


def test_no_key_at_all_is_an_openai_401(front: Emulator) -> None:
    response = httpx.get(front.url + "/v1/models")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_an_unknown_path_is_a_404_in_the_asking_client_s_shape(
    front: Emulator, oai: openai.OpenAI, claude: anthropic.Anthropic
) -> None:
    with pytest.raises(openai.NotFoundError) as from_openai:
        oai.get("/nope", cast_to=object)
    assert from_openai.value.body == {
        "message": "Invalid URL (GET /v1/nope)",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    with pytest.raises(anthropic.NotFoundError) as from_anthropic:
        claude.get("/v1/nope", cast_to=object)
    assert from_anthropic.value.body == {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}
    gemini = httpx.get(front.url + "/v1beta/nope", headers={"x-goog-api-key": "k"})
    assert gemini.status_code == 404
    assert gemini.json()["error"]["status"] == "NOT_FOUND"


def test_a_configured_provider_still_answers_every_client_in_its_shape() -> None:
    with running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as url:
        listing = httpx.get(url + "/v1/models", headers={**ANTHROPIC_KEY, **OPENAI_KEY}).json()
        assert listing["object"] == "list"
        assert (
            httpx.get(url + "/v1/nope", headers=ANTHROPIC_KEY)
            .json()["error"]["message"]
            .startswith("You didn't provide an API key.")
        )


# Embeddings.


def test_embeddings_one_small_deterministic_vector_per_input(oai: openai.OpenAI) -> None:
    first = oai.embeddings.create(model="text-embedding-3-small", input=["hello world", "bye"], encoding_format="float")
    assert [e.index for e in first.data] == [0, 1]
    vectors = [e.embedding for e in first.data]
    assert all(len(v) == 8 and all(-1 < x < 1 for x in v) for v in vectors)
    assert vectors[0] != vectors[1]
    assert first.model == "text-embedding-3-small"
    assert first.usage.prompt_tokens == first.usage.total_tokens == 3
    again = oai.embeddings.create(model="text-embedding-3-small", input="hello world", encoding_format="float")
    assert again.data[0].embedding == vectors[0]
    # The SDK's default asks for base64 and decodes it: the same numbers.
    assert oai.embeddings.create(model="text-embedding-3-small", input="hello world").data[0].embedding == vectors[0]


def test_embeddings_of_token_arrays_and_chosen_dimensions(oai: openai.OpenAI) -> None:
    result = oai.embeddings.create(model="text-embedding-3-large", input=[[1, 2, 3], [4]], dimensions=64)
    assert [len(e.embedding) for e in result.data] == [64, 64]
    assert result.usage.prompt_tokens == 4


def test_embeddings_base64_is_little_endian_float32(front: Emulator) -> None:
    body = {"model": "m", "input": "x", "encoding_format": "base64"}
    packed = httpx.post(front.url + "/v1/embeddings", headers=OPENAI_KEY, json=body).json()["data"][0]["embedding"]
    floats = httpx.post(front.url + "/v1/embeddings", headers=OPENAI_KEY, json={**body, "encoding_format": "float"})
    assert list(struct.unpack("<8f", base64.b64decode(packed))) == floats.json()["data"][0]["embedding"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"input": "x"}, "you must provide a model parameter"),
        ({"model": "m"}, "Missing required parameter: 'input'."),
        ({"model": "m", "input": ""}, "'$.input' is invalid."),
        ({"model": "m", "input": [1, "a"]}, "'$.input' is invalid."),
        ({"model": "m", "input": "x", "dimensions": 0}, "'$.dimensions' is invalid."),
        ({"model": "m", "input": "x", "encoding_format": "int8"}, "'$.encoding_format' is invalid."),
    ],
)
def test_embeddings_refuse_what_openai_refuses(front: Emulator, body: dict[str, object], message: str) -> None:
    response = httpx.post(front.url + "/v1/embeddings", headers=OPENAI_KEY, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(message)
    assert httpx.post(front.url + "/v1/embeddings", json=body).status_code == 401


# Files.


def test_files_upload_list_retrieve_download_delete(oai: openai.OpenAI) -> None:
    content = b'{"custom_id": "1"}\n' * 3
    uploaded = oai.files.create(file=("notes.jsonl", content), purpose="batch")
    assert uploaded.id.startswith("file-")
    assert (uploaded.object, uploaded.bytes, uploaded.filename, uploaded.purpose, uploaded.status) == (
        "file",
        len(content),
        "notes.jsonl",
        "batch",
        "processed",
    )
    other = oai.files.create(file=("cat.png", b"\x89PNG\r\n\x1a\n"), purpose="vision")
    assert [f.id for f in oai.files.list(purpose="batch")] == [uploaded.id]
    assert [f.id for f in oai.files.list()][:2] == [other.id, uploaded.id]  # newest first
    assert oai.files.retrieve(uploaded.id) == uploaded
    assert oai.files.content(uploaded.id).read() == content
    deleted = oai.files.delete(uploaded.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (uploaded.id, "file", True)
    with pytest.raises(openai.NotFoundError) as gone:
        oai.files.retrieve(uploaded.id)
    assert gone.value.body == {
        "message": f"No such File object: {uploaded.id}",
        "type": "invalid_request_error",
        "param": "id",
        "code": None,
    }
    with pytest.raises(openai.NotFoundError):
        oai.files.delete(uploaded.id)
    oai.files.delete(other.id)


def test_files_list_pages_after_a_cursor(oai: openai.OpenAI) -> None:
    ids = [oai.files.create(file=(f"{n}.jsonl", b"{}\n"), purpose="evals").id for n in range(3)]
    page = oai.files.list(purpose="evals", limit=2, order="asc")
    assert [f.id for f in page.data] == ids[:2] and page.has_more is True
    assert [f.id for f in page] == ids  # the SDK follows `after`
    for file_id in ids:
        oai.files.delete(file_id)


def test_files_refuse_an_upload_without_its_fields(front: Emulator, oai: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="purpose"):
        oai.files.create(file=("a.txt", b"a"), purpose="nonsense")  # type: ignore[arg-type]
    missing = httpx.post(front.url + "/v1/files", headers=OPENAI_KEY, files={"file": ("a.txt", b"a")})
    assert missing.status_code == 400
    assert missing.json()["error"]["message"] == "Missing required parameter: 'purpose'."
    not_a_form = httpx.post(front.url + "/v1/files", headers=OPENAI_KEY, json={"file": "a"})
    assert not_a_form.status_code == 400
    assert httpx.get(front.url + "/v1/files", headers=OPENAI_KEY, params={"limit": "0"}).status_code == 400
    assert httpx.get(front.url + "/v1/files").status_code == 401


def test_an_upload_is_recorded(front: Emulator, oai: openai.OpenAI) -> None:
    before = len(recorded_requests(front.record))
    uploaded = oai.files.create(file=("r.jsonl", b"{}\n"), purpose="batch")
    (entry,) = recorded_requests(front.record)[before:]
    assert (entry["path"], entry["status"], entry["headers"]["authorization"]) == ("/v1/files", 200, "REDACTED")
    oai.files.delete(uploaded.id)


# Through Suture: pass-through reaches the emulator's embeddings and files.


def test_suture_passes_embeddings_files_and_models_through_to_the_emulator(front: Emulator) -> None:
    with (
        suture(openai={"upstream": front.url + "/v1"}, anthropic={"upstream": front.url}, passthrough=True) as base,
        openai.OpenAI(base_url=base + "/v1", api_key="sk-any", max_retries=0, timeout=10) as client,
        anthropic.Anthropic(base_url=base, api_key="sk-ant-any", max_retries=0, timeout=10) as claude,
    ):
        before = len(recorded_requests(front.record))
        raw = client.embeddings.with_raw_response.create(model="text-embedding-3-small", input="hello world")
        assert raw.headers["x-suture-repairs"] == "0"
        direct = httpx.post(
            front.url + "/v1/embeddings",
            headers=OPENAI_KEY,
            json={"model": "text-embedding-3-small", "input": "hello world"},
        )
        assert raw.parse().data[0].embedding == direct.json()["data"][0]["embedding"]
        uploaded = client.files.create(file=("notes.jsonl", b'{"custom_id": "1"}\n'), purpose="batch")
        assert client.files.retrieve(uploaded.id).bytes == len(b'{"custom_id": "1"}\n')
        assert uploaded.id in [f.id for f in client.files.list()]
        assert client.files.delete(uploaded.id).deleted is True
        assert all(m.id.startswith(("gpt-", "text-embedding-")) for m in client.models.list())
        assert all(m.id.startswith("claude-") for m in claude.models.list())
        paths = [(e["path"], e["status"]) for e in recorded_requests(front.record)[before:]]
        assert paths[:1] == [("/v1/embeddings", 200)]
        assert ("/v1/files", 200) in paths and (f"/v1/files/{uploaded.id}", 200) in paths


# What `suture emulate` says.


def test_the_banner_names_every_api_its_paths_and_that_any_key_will_do() -> None:
    text = banner(EmulatorConfig(), "127.0.0.1", 8788)
    assert text.startswith("suture emulate: every provider API on http://127.0.0.1:8788, any key accepted\n")
    for path in (
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        ":generateContent",
        "/model/{modelId}/converse",
        "/v1/embeddings",
        "/v1/files",
        "/v1/models",
    ):
        assert path in text
    for path in DIALECTS:
        if path.count("/") > 2 and not path.startswith("/v1"):
            provider = path.split("/")[1]
            assert f"{provider}," in text or f"{provider}\n" in text, provider
    assert "Keys: any value is accepted" in text
    assert "the shape of the client that asks" in text
    assert all(len(line) <= 100 for line in text.splitlines())
    narrowed = " ".join(banner(EmulatorConfig(provider="anthropic", record_path=Path("r.jsonl")), "::1", 9).split())
    assert "http://[::1]:9" in narrowed and "Anthropic's shape (--provider anthropic)" in narrowed
    assert "Recording every request to r.jsonl" in narrowed


def test_emulate_without_provider_serves_every_client_and_prints_the_banner(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    served: list[EmulatorConfig] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: served.append(app.state.config))
    assert cli.main(["emulate", "--port", "9999"]) == 0
    assert served == [EmulatorConfig(provider=None)]
    assert capsys.readouterr().out == banner(EmulatorConfig(), "127.0.0.1", 9999)


def test_emulate_help_describes_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["emulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default: in the shape of the client that asks" in out
    assert "all on one port" in out and "accepts any API key" in out
