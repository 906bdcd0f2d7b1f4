"""The route table without litellm: config errors, native named upstreams, and the lazy import."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest

from proxy.app import build_app
from proxy.routes.model_routes import build_router
from proxy.settings import ConfigError, Settings, load_settings
from tests._support.proxy_e2e import EchoUpstream, suture
from tests._support.servers import running_server

ROOT = Path(__file__).resolve().parents[2]

LITELLM_ROUTES: dict[str, Any] = {
    "upstreams": {"gemini-via-litellm": {"protocol": "litellm", "model": "gemini/{model}", "provider": "gemini"}},
    "routes": [{"match": "gemini-*", "upstream": "gemini-via-litellm"}],
}
ORPHAN_CHAT = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_seed0001", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        ],
    },
    {"role": "assistant", "content": "I noticed that you have interrupted me. What can I do for you?"},
    {"role": "user", "content": "Actually, make it London."},
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suture.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_issue_example_loads(tmp_path: Path) -> None:
    settings = load_settings(
        write(
            tmp_path,
            """
            routes:
              - match: "claude-*"
                upstream: anthropic
              - match: "gemini-*"
                upstream: gemini-via-litellm
            upstreams:
              gemini-via-litellm: {protocol: litellm, model: "gemini/{model}", api_key_env: GEMINI_API_KEY}
            """,
        )
    )
    router = build_router(settings, environ={"GEMINI_API_KEY": "g-key"})
    gemini = router.resolve("gemini-2.5-pro")
    assert gemini is not None and gemini.litellm_model("gemini-2.5-pro") == "gemini/gemini-2.5-pro"
    assert gemini.api_key is not None and gemini.api_key.get_secret_value() == "g-key"
    claude = router.resolve("claude-sonnet-4-6")
    assert claude is not None and claude.builtin and claude.protocol == "anthropic"
    assert router.resolve("gpt-4o") is None and router.resolve(None) is None


def test_first_match_wins_and_globs_are_case_sensitive() -> None:
    settings = Settings(
        upstreams={
            "a": {"protocol": "litellm", "model": "mistral/{model}"},
            "b": {"protocol": "litellm", "model": "openai/{model}"},
        },
        routes=[
            {"match": "mistral-large-latest", "upstream": "a"},
            {"match": "mistral-*", "upstream": "b"},
            {"match": "m?del-[0-9]", "upstream": "a"},
        ],
    )
    router = build_router(settings, environ={})
    assert [getattr(router.resolve(m), "name", None) for m in ("mistral-large-latest", "mistral-small", "model-7")] == [
        "a",
        "b",
        "a",
    ]
    assert router.resolve("Mistral-small") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("routes: [{match: a, upstream: nowhere}]\n", "routes.0.upstream: no upstream named 'nowhere'"),
        ("routes: [{match: a, upstream: openai, weight: 2}]\n", "routes.0.weight: unknown setting"),
        ("upstreams: {g: {protocol: litellm, modle: x}}\n", "upstreams.g.modle: unknown setting"),
        (
            "upstreams: {g: {protocol: grpc}}\n",
            "upstreams.g.protocol: Input should be 'openai', 'anthropic' or 'litellm'",
        ),
        ("upstreams: {g: {protocol: openai}}\n", "upstreams.g: protocol openai needs base_url"),
        ("upstreams: {g: {protocol: litellm, provider: nobody}}\n", "upstreams.g.provider: unknown provider 'nobody'"),
        ("upstreams: {g: {protocol: litellm, api_base: 'http://u:p@h'}}\n", "upstreams.g.api_base: must not carry"),
        ("upstreams: {openai: {protocol: openai, base_url: 'http://h'}}\n", "upstreams: 'openai' is the built-in"),
    ],
)
def test_config_errors_name_the_path(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text))
    assert expected in str(caught.value)


def test_a_missing_key_variable_fails_at_start_up() -> None:
    settings = Settings(
        upstreams={"g": {"protocol": "litellm", "api_key_env": "SUTURE_TEST_NOT_SET"}},
        routes=[{"match": "*", "upstream": "g"}],
    )
    with pytest.raises(ConfigError, match=r"upstreams\.g\.api_key_env: SUTURE_TEST_NOT_SET is not set"):
        build_app(settings)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("sk-named-key\n", "has a space or line break at either end"),
        ("sk-k\u00e9y-named", "may hold only printable ASCII"),
    ],
)
def test_a_key_variable_that_cannot_go_in_a_header_fails_at_start_up(
    monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    monkeypatch.setenv("SUTURE_TEST_BAD_KEY", value)
    settings = Settings(
        upstreams={"g": {"protocol": "litellm", "api_key_env": "SUTURE_TEST_BAD_KEY"}},
        routes=[{"match": "*", "upstream": "g"}],
    )
    with pytest.raises(ConfigError, match=rf"upstreams\.g\.api_key_env: SUTURE_TEST_BAD_KEY {problem}") as caught:
        build_app(settings)
    assert value.strip() not in str(caught.value)


def test_routes_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_UPSTREAMS", orjson.dumps(LITELLM_ROUTES["upstreams"]).decode())
    monkeypatch.setenv("SUTURE_ROUTES", orjson.dumps(LITELLM_ROUTES["routes"]).decode())
    settings = load_settings(None)
    assert settings.routes[0].upstream == "gemini-via-litellm"


def test_native_named_upstream_gets_the_repaired_transcript_and_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_TEST_DEEPSEEK_KEY", "ds-key")
    echo = EchoUpstream()
    with running_server(echo.app()) as upstream:
        settings: dict[str, Any] = {
            "upstreams": {
                "deepseek": {
                    "protocol": "openai",
                    "base_url": f"{upstream}/ds",
                    "api_key_env": "SUTURE_TEST_DEEPSEEK_KEY",
                    "provider": "deepseek",
                }
            },
            "routes": [{"match": "deepseek-*", "upstream": "deepseek"}],
        }
        with suture(**settings) as url:
            answer = httpx.post(
                f"{url}/v1/chat/completions",
                json={"model": "deepseek-chat", "messages": ORPHAN_CHAT},
                headers={"authorization": "Bearer client-key"},
            )
    assert answer.status_code == 200 and answer.headers["x-suture-repairs"] != "0"
    arrived = echo.received[-1]
    assert arrived.path == "/ds/chat/completions"
    assert arrived.header("authorization") == ["Bearer ds-key"]
    roles = [m["role"] for m in orjson.loads(arrived.body)["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]


def test_a_client_of_another_format_needs_litellm() -> None:
    echo = EchoUpstream()
    with (
        running_server(echo.app()) as upstream,
        suture(openai={"upstream": upstream}, routes=[{"match": "claude-*", "upstream": "anthropic"}]) as url,
    ):
        answer = httpx.post(f"{url}/v1/chat/completions", json={"model": "claude-sonnet-4-6", "messages": ORPHAN_CHAT})
    assert answer.status_code == 400
    assert "only through a litellm upstream" in answer.json()["error"]["message"]
    assert echo.received == []


def test_the_client_key_for_suture_never_reaches_a_routed_upstream() -> None:
    echo = EchoUpstream()
    with running_server(echo.app()) as upstream:
        settings: dict[str, Any] = {
            "openai": {
                "upstream": upstream,
                "upstream_api_key": "suture-openai-key",
                "client_api_key": "key-for-suture",
            },
            "upstreams": {"other": {"protocol": "openai", "base_url": upstream}},
            "routes": [{"match": "other-*", "upstream": "other"}],
        }
        with suture(**settings) as url:
            answer = httpx.post(
                f"{url}/v1/chat/completions",
                json={"model": "other-model", "messages": [{"role": "user", "content": "hi"}]},
                headers={"authorization": "Bearer key-for-suture"},
            )
    assert answer.status_code == 200
    assert echo.received[-1].header("authorization") == []


@pytest.mark.parametrize(("routes", "imported"), [({}, "False"), (LITELLM_ROUTES, "True")])
def test_litellm_is_imported_at_start_up_exactly_when_a_route_names_a_litellm_upstream(
    routes: dict[str, Any], imported: str
) -> None:
    """Seconds of import: never paid without a litellm upstream, and paid before readiness (not by
    the first routed request) with one."""
    # A fresh interpreter: this test session may have imported litellm already.
    script = textwrap.dedent(
        f"""
        import sys
        import httpx
        from tests._support.proxy_e2e import EchoUpstream, suture
        from tests._support.servers import running_server

        echo = EchoUpstream()
        with running_server(echo.app()) as upstream:
            with suture(openai={{"upstream": upstream}}, **{routes!r}) as url:
                started = "litellm" in sys.modules
                answer = httpx.post(url + "/v1/chat/completions",
                                    json={{"model": "gpt-4o", "messages": [{{"role": "user", "content": "hi"}}]}})
                assert answer.status_code == 200, answer.text
                assert len(echo.received) == 1
                print(started)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == imported


ORPHAN_RESPONSES: list[Any] = [
    {"type": "message", "role": "user", "content": "What's the weather in Paris?"},
    {"type": "function_call", "call_id": "call_seed0001", "name": "get_weather", "arguments": "{}"},
    {"type": "message", "role": "user", "content": "Actually, make it London."},
]


def test_a_responses_request_follows_the_route_to_a_native_openai_upstream() -> None:
    default, routed = EchoUpstream(), EchoUpstream()
    with running_server(default.app()) as default_url, running_server(routed.app()) as routed_url:
        settings: dict[str, Any] = {
            "openai": {"upstream": default_url},
            "upstreams": {"other": {"protocol": "openai", "base_url": f"{routed_url}/v1"}},
            "routes": [{"match": "other-*", "upstream": "other"}],
        }
        with suture(**settings) as url, openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client:
            answer = client.responses.with_raw_response.create(model="other-model", input=ORPHAN_RESPONSES)
    assert answer.status_code == 200 and answer.headers["x-suture-repairs"] == "1"
    assert default.received == []
    arrived = routed.received[-1]
    assert arrived.path == "/v1/responses"
    # Repaired on the way: the interrupted call is answered right after it.
    items = [(i["type"], i.get("call_id")) for i in orjson.loads(arrived.body)["input"]]
    assert items[1:3] == [("function_call", "call_seed0001"), ("function_call_output", "call_seed0001")]


def test_a_responses_request_routed_to_an_anthropic_upstream_needs_litellm() -> None:
    echo = EchoUpstream()
    with (
        running_server(echo.app()) as upstream,
        suture(anthropic={"upstream": upstream}, routes=[{"match": "claude-*", "upstream": "anthropic"}]) as url,
        openai.OpenAI(base_url=f"{url}/v1", api_key="k", max_retries=0) as client,
        pytest.raises(openai.BadRequestError, match="only through a litellm upstream"),
    ):
        client.responses.create(model="claude-sonnet-4-6", input=ORPHAN_RESPONSES)
    assert echo.received == []
