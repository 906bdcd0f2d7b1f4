"""The page over HTTP: off by default, its headers, its key, and what it serves, through a running Suture."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import orjson
import pytest

from proxy.app import build_app
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import ConfigError, Settings
from proxy.ui.feed import Feed
from tests._support.page import INTERRUPTED_CHAT, TOOLS
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

REPO = Path(__file__).resolve().parents[2]
KEY = "ui-key-for-tests-0123456789"


@pytest.fixture(scope="module")
def openai_emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as url:
        yield url + "/v1"


def broken_request(url: str) -> str:
    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-page-test", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=INTERRUPTED_CHAT, tools=TOOLS)  # type: ignore[arg-type]
    assert raw.headers["x-suture-repairs"] == "3"
    return raw.headers["x-suture-request-id"]


def test_the_page_is_off_by_default(openai_emulator: str) -> None:
    with suture(openai={"upstream": openai_emulator}) as url:
        broken_request(url)
        assert httpx.get(url + "/suture/").status_code == 404
    state = build_app(Settings()).state.suture
    # Nothing is fed and no body is held for the page when it is off.
    assert not any(isinstance(o, Feed) for o in state.observers) and not state.drafts


def test_the_page_lists_a_repaired_request_and_serves_its_capture(openai_emulator: str) -> None:
    with suture(openai={"upstream": openai_emulator}, ui={"enabled": True}) as url:
        request_id = broken_request(url)
        page = httpx.get(url + "/suture/")
        assert page.status_code == 200
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert "'unsafe-inline'" not in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
        assert f'data-id="{request_id}"' in page.text
        # The counts of the last hour, drawn by the server as inline SVG (no script, no CDN).
        assert '<svg class="chart"' in page.text and ">TP001 repairs<" in page.text
        detail = httpx.get(url + f"/suture/requests/{request_id}")
        assert detail.status_code == 200 and "mark-synthetic" in detail.text
        assert "A tool call that no result answers anywhere in the transcript" in detail.text
        capture = httpx.get(url + f"/suture/requests/{request_id}/capture.json")
        assert capture.headers["content-disposition"] == f'attachment; filename="suture-{request_id}.json"'
        record = orjson.loads(capture.content)
        assert record["request_id"] == request_id and record["original"]["messages"] == INTERRUPTED_CHAT
        assert [r["code"] for r in record["repairs"]] == ["TP002", "TP002", "TP001"]
        # Headers are never kept: not the client's key, nor anything else but the capture's allow-list.
        assert b"sk-page-test" not in capture.content
        assert httpx.get(url + "/suture/requests/nope").status_code == 404
        # Probes and the page's own requests are not listed.
        httpx.get(url + "/healthz")
        assert httpx.get(url + "/suture/").text.count('class="request') == 1


def test_keep_bodies_false_lists_without_bodies(openai_emulator: str) -> None:
    with suture(openai={"upstream": openai_emulator}, ui={"enabled": True, "keep_bodies": False}) as url:
        request_id = broken_request(url)
        assert "TP001" in httpx.get(url + "/suture/").text
        assert 'id="no-body"' in httpx.get(url + f"/suture/requests/{request_id}").text
        assert httpx.get(url + f"/suture/requests/{request_id}/capture.json").status_code == 404


def test_a_non_loopback_bind_without_the_key_refuses_to_start() -> None:
    with pytest.raises(ConfigError, match="SUTURE_UI_API_KEY"):
        build_app(Settings(host="0.0.0.0", ui={"enabled": True}))
    run = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "serve", "--host", "0.0.0.0", "--port", "0"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "SUTURE_UI_ENABLED": "true"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "suture: config error: ui.enabled on 0.0.0.0, not a loopback address, needs a key for the page: "
        "set SUTURE_UI_API_KEY"
    ]


def test_the_key_is_environment_only(tmp_path: Path) -> None:
    from proxy.settings import load_settings

    config = tmp_path / "suture.yaml"
    config.write_text(f"ui:\n  enabled: true\n  api_key: {KEY}\n")
    with pytest.raises(ConfigError, match="SUTURE_UI_API_KEY"):
        load_settings(config)


def test_with_a_key_the_page_asks_for_it(openai_emulator: str) -> None:
    settings = {"host": "0.0.0.0", "openai": {"upstream": openai_emulator}, "ui": {"enabled": True, "api_key": KEY}}
    with suture(**settings) as url:
        request_id = broken_request(url)
        for path in (
            "/suture/",
            f"/suture/requests/{request_id}",
            f"/suture/requests/{request_id}/capture.json",
            "/suture/events",
        ):
            refused = httpx.get(url + path)
            assert refused.status_code == 401, path
            assert request_id not in refused.text
            assert refused.headers["x-content-type-options"] == "nosniff"
        assert httpx.get(url + "/suture/", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(url + "/suture/", headers={"authorization": f"Bearer {KEY}"}).status_code == 200
        assert httpx.get(url + "/suture/", headers={"x-suture-ui-key": KEY}).status_code == 200
        with httpx.Client(base_url=url) as browser:
            assert browser.post("/suture/login", data={"key": "wrong"}).status_code == 401
            login = browser.post("/suture/login", data={"key": KEY})
            assert login.status_code == 303
            cookie = login.headers["set-cookie"]
            assert KEY not in cookie and "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
            assert request_id in browser.get("/suture/").text


def test_ui_path_must_not_clash_with_a_provider_path() -> None:
    with pytest.raises(ConfigError, match="clashes"):
        build_app(Settings(ui={"enabled": True, "path": "/v1/page"}))
