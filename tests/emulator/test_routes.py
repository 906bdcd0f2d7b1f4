"""Everything around the three API routes: models, health, unknown paths, malformed bodies."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.emulator.app import OPENAI_BAD_JSON, OPENAI_MISSING_KEY
from tests._support.emulator import Emulator
from tests._support.servers import running_server

OPENAI_KEY = {"authorization": "Bearer sk-test"}
ANTHROPIC_KEY = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}


@pytest.fixture(scope="module")
def http(emulator: Emulator) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=emulator.url) as client:
        yield client


@pytest.fixture(scope="module")
def anthropic_emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig(provider="anthropic"))) as url:
        yield url


def test_healthz_needs_no_key(http: httpx.Client) -> None:
    response = http.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_models_openai(http: httpx.Client) -> None:
    assert http.get("/v1/models").status_code == 401
    listing = http.get("/v1/models", headers=OPENAI_KEY).json()
    assert listing["object"] == "list"
    assert {m["object"] for m in listing["data"]} == {"model"}


def test_models_anthropic(anthropic_emulator: str) -> None:
    missing = httpx.get(anthropic_emulator + "/v1/models")
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "authentication_error"
    listing = httpx.get(anthropic_emulator + "/v1/models", headers=ANTHROPIC_KEY).json()
    assert listing["has_more"] is False
    assert {m["type"] for m in listing["data"]} == {"model"}


def test_unknown_route_openai(http: httpx.Client) -> None:
    assert http.post("/v1/nope").json()["error"]["message"] == OPENAI_MISSING_KEY
    response = http.post("/v1/nope", headers=OPENAI_KEY)
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "message": "Invalid URL (POST /v1/nope)",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    # A known path with the wrong method is an unknown URL too, as on the real API.
    assert http.get("/v1/chat/completions", headers=OPENAI_KEY).status_code == 404


def test_unknown_route_anthropic(anthropic_emulator: str) -> None:
    response = httpx.get(anthropic_emulator + "/v1/nope", headers=ANTHROPIC_KEY)
    assert response.status_code == 404
    assert response.headers["request-id"].startswith("req_")
    assert response.json() == {"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}


def test_api_routes_ignore_the_configured_provider(anthropic_emulator: str) -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
    response = httpx.post(anthropic_emulator + "/v1/chat/completions", headers=OPENAI_KEY, json=body)
    assert response.status_code == 200
    assert response.headers["x-request-id"].startswith("req_")


def test_bad_json_is_400_in_provider_shape(http: httpx.Client) -> None:
    response = http.post("/v1/chat/completions", headers=OPENAI_KEY, content=b"{not json")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == OPENAI_BAD_JSON
    anthropic = http.post("/v1/messages", headers=ANTHROPIC_KEY, content=b"{not json")
    assert anthropic.status_code == 400
    assert anthropic.json()["type"] == "error"


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses", "/v1/messages"])
def test_non_object_body_is_400(http: httpx.Client, path: str) -> None:
    response = http.post(path, headers={**OPENAI_KEY, **ANTHROPIC_KEY}, json=["a", "list"])
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/v1/chat/completions", {"messages": []}, "you must provide a model parameter"),
        ("/v1/responses", {"input": "hi"}, "Missing required parameter: 'model'."),
        ("/v1/messages", {"model": "claude-sonnet-4-6", "messages": []}, "max_tokens: Field required"),
    ],
)
def test_missing_required_field(http: httpx.Client, path: str, body: dict[str, object], message: str) -> None:
    response = http.post(path, headers={**OPENAI_KEY, **ANTHROPIC_KEY}, json=body)
    assert response.status_code == 400
    assert message in response.text


def test_wrong_shape_is_400_not_500(http: httpx.Client) -> None:
    body = {"model": "gpt-4o-mini", "messages": "not a list"}
    response = http.post("/v1/chat/completions", headers=OPENAI_KEY, json=body)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_keys_can_be_waived() -> None:
    app = build_emulator_app(EmulatorConfig(provider="openai", require_api_key=False))
    with running_server(app) as url:
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(url + "/v1/chat/completions", json=body).status_code == 200


def test_config_rejects_unknown_provider() -> None:
    with pytest.raises(ValueError, match="provider"):
        EmulatorConfig(provider="gemini")  # type: ignore[arg-type]
