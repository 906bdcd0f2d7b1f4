"""The google-genai SDK against the emulator's Gemini generateContent / streamGenerateContent."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from google import genai
from google.genai import errors, types

from tests._support.emulator import Emulator
from tests._support.seed_transcripts import CORRECTION, GEMINI_TOOLS, gemini_repaired, gemini_seed

MODEL = "gemini-2.5-flash"


def make_client(url: str, api_key: str = "AIza-test") -> genai.Client:
    return genai.Client(api_key=api_key, http_options=types.HttpOptions(base_url=url, timeout=10_000))


@pytest.fixture(scope="module")
def client(emulator: Emulator) -> Iterator[genai.Client]:
    with make_client(emulator.url) as client:
        yield client


def config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(tools=GEMINI_TOOLS)


def test_text_reply(client: genai.Client) -> None:
    response = client.models.generate_content(model=MODEL, contents="Hello there")
    assert response.text == 'Emulated reply. Last user text: "Hello there"'
    assert response.model_version == MODEL
    assert response.candidates and response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.usage_metadata is not None and response.usage_metadata.prompt_token_count == 2


def test_tool_call_is_a_function_call_part(client: genai.Client) -> None:
    response = client.models.generate_content(model=MODEL, contents="CALL_TOOL get_weather", config=config())
    [call] = response.function_calls or []
    assert (call.name, call.args) == ("get_weather", {})


def test_stream_text(client: genai.Client) -> None:
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="stream please"))
    assert len(chunks) > 1
    assert "".join(c.text or "" for c in chunks) == 'Emulated reply. Last user text: "stream please"'
    assert chunks[-1].usage_metadata is not None


def test_stream_without_alt_sse_is_one_json_array(emulator: Emulator) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    response = httpx.post(
        f"{emulator.url}/v1beta/models/{MODEL}:streamGenerateContent", json=body, headers={"x-goog-api-key": "k"}
    )
    assert response.status_code == 200
    chunks = response.json()
    assert isinstance(chunks, list) and chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_key_as_query_parameter(emulator: Emulator) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    url = f"{emulator.url}/v1beta/models/{MODEL}:generateContent"
    assert httpx.post(url, json=body, params={"key": "k"}).status_code == 200
    missing = httpx.post(url, json=body)
    assert missing.status_code == 403
    assert missing.json()["error"]["status"] == "PERMISSION_DENIED"


def test_unknown_method_is_404(emulator: Emulator) -> None:
    response = httpx.post(
        f"{emulator.url}/v1beta/models/{MODEL}:embedContent", json={}, headers={"x-goog-api-key": "k"}
    )
    assert response.status_code == 404
    assert response.json()["error"]["status"] == "NOT_FOUND"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_seed_transcript_is_rejected(client: genai.Client, stream: bool) -> None:
    with pytest.raises(errors.ClientError) as caught:
        if stream:
            list(client.models.generate_content_stream(model=MODEL, contents=gemini_seed(), config=config()))
        else:
            client.models.generate_content(model=MODEL, contents=gemini_seed(), config=config())
    assert caught.value.code == 400
    assert caught.value.status == "INVALID_ARGUMENT"
    assert "number of function response parts is equal to the number of function call parts" in str(caught.value)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_repaired_transcript_is_accepted(client: genai.Client, stream: bool) -> None:
    if stream:
        chunks = client.models.generate_content_stream(model=MODEL, contents=gemini_repaired(), config=config())
        text = "".join(c.text or "" for c in chunks)
    else:
        text = client.models.generate_content(model=MODEL, contents=gemini_repaired(), config=config()).text or ""
    assert text == f'Emulated reply. Last user text: "{CORRECTION}"'


def test_v1beta_paths_are_served_too(emulator: Emulator) -> None:
    options = types.HttpOptions(base_url=emulator.url, api_version="v1beta", timeout=10_000)
    with genai.Client(api_key="AIza-test", http_options=options) as client:
        assert client.models.generate_content(model=MODEL, contents="beta").text
        assert "".join(c.text or "" for c in client.models.generate_content_stream(model=MODEL, contents="beta"))
