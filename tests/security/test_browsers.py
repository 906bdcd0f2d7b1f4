"""Web pages against a loopback Suture that holds a key (issue 37, part 1), through a real Suture.

A page the user merely visits can make the browser send requests to 127.0.0.1: simple POSTs need
no CORS preflight, and a site that rebinds its own name to 127.0.0.1 reads the answers too. Each
test here was run against the code before proxy/browsers.py and failed there: the request reached
the upstream with Suture's key, or the page answered with the kept conversations.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from proxy.settings import ConfigError, Settings, load_settings
from tests._support.proxy_e2e import EchoUpstream, suture
from tests._support.servers import free_port, running_server

OWN_KEY = "sk-suture-held-key-for-browsers-7f3a"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "spend my key"}]}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def echo() -> Iterator[tuple[EchoUpstream, str]]:
    upstream = EchoUpstream()
    with running_server(upstream.app()) as url:
        yield upstream, url


@pytest.fixture
def keyed(echo: tuple[EchoUpstream, str]) -> Iterator[tuple[EchoUpstream, str]]:
    """Suture on loopback holding an upstream key, asking its clients for none: the case at risk."""
    upstream, url = echo
    with suture(openai={"upstream": url + "/v1", "upstream_api_key": OWN_KEY}, ui={"enabled": True}) as base:
        yield upstream, base


def _port(base: str) -> str:
    return base.rsplit(":", 1)[1]


# DNS rebinding: the page's name resolves to 127.0.0.1, so the browser sends its own Host.


def test_a_rebound_host_name_reads_nothing_from_the_page(keyed: tuple[EchoUpstream, str]) -> None:
    _, base = keyed
    with httpx.Client(base_url=base, timeout=10) as client:
        assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
        request_id = client.get("/suture/").text.split('data-id="', 1)[1].split('"', 1)[0]
        rebound = {"host": f"attacker.example:{_port(base)}"}
        for path in ("/suture/", f"/suture/requests/{request_id}", f"/suture/requests/{request_id}/capture.json"):
            answer = client.get(path, headers=rebound)
            assert answer.status_code == 421, path
            assert "spend my key" not in answer.text and request_id not in answer.text
            assert "allowed_hosts" in answer.json()["error"]["message"]
        # The same paths, by the loopback name the user typed, still answer.
        assert (
            client.get(f"/suture/requests/{request_id}", headers={"host": f"localhost:{_port(base)}"}).status_code
            == 200
        )


def test_a_rebound_host_name_cannot_spend_the_key(keyed: tuple[EchoUpstream, str]) -> None:
    upstream, base = keyed
    answer = httpx.post(
        base + "/v1/chat/completions", json=CHAT, headers={"host": f"attacker.example:{_port(base)}"}, timeout=10
    )
    assert answer.status_code == 421
    assert answer.headers["x-suture-request-id"]  # the refusal is Suture's answer, logged like any other
    assert upstream.received == []


def test_allowed_hosts_names_the_hosts_suture_answers_for(echo: tuple[EchoUpstream, str]) -> None:
    upstream, url = echo
    with suture(openai={"upstream": url + "/v1"}, allowed_hosts=["suture.internal", ".corp.example"]) as base:
        for host, status in [("suture.internal", 200), ("a.corp.example", 200), ("corp.example.evil", 421)]:
            answer = httpx.post(base + "/v1/chat/completions", json=CHAT, headers={"host": host}, timeout=10)
            assert answer.status_code == status, host
    assert len(upstream.received) == 2


# Cross-site requests: no preflight for a simple POST, and the answer need not be read to spend the key.


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://attacker.example", "sec-fetch-site": "cross-site"},
        {"origin": "https://attacker.example"},  # an older browser: Origin alone
        {"sec-fetch-site": "cross-site"},  # a GET-like navigation, no Origin
        {"origin": "null", "sec-fetch-site": "cross-site"},  # a sandboxed frame, a file:// page
        {"origin": "http://localhost:3000", "sec-fetch-site": "same-site"},  # another port of localhost
    ],
    ids=["origin-and-fetch-site", "origin", "fetch-site", "null-origin", "same-site"],
)
def test_a_web_page_cannot_spend_the_key(keyed: tuple[EchoUpstream, str], headers: dict[str, str]) -> None:
    upstream, base = keyed
    # A fetch() of a Blob: no Content-Type at all, so no preflight.
    answer = httpx.post(
        base + "/v1/chat/completions", content=httpx.Request("POST", "/", json=CHAT).content, headers=headers
    )
    assert answer.status_code == 403
    assert "allowed_origins" in answer.json()["error"]["message"]
    assert upstream.received == []


def test_a_form_post_to_a_passthrough_route_does_not_reach_the_upstream(keyed: tuple[EchoUpstream, str]) -> None:
    upstream, base = keyed
    answer = httpx.post(
        base + "/v1/files",
        files={"file": ("batch.jsonl", b'{"custom_id": "1"}\n')},
        data={"purpose": "batch"},
        headers={"origin": "https://attacker.example", "sec-fetch-site": "cross-site"},
        timeout=10,
    )
    assert answer.status_code == 403
    assert upstream.received == []


def test_a_body_of_no_content_type_is_refused_even_without_an_origin(keyed: tuple[EchoUpstream, str]) -> None:
    upstream, base = keyed
    body = httpx.Request("POST", "/", json=CHAT).content
    answer = httpx.post(base + "/v1/chat/completions", content=body, timeout=10)
    assert answer.status_code == 415
    assert "Content-Type: application/json" in answer.json()["error"]["message"]
    assert upstream.received == []


def test_allowed_origins_lets_the_user_s_own_web_app_through(echo: tuple[EchoUpstream, str]) -> None:
    upstream, url = echo
    own = {"origin": "http://localhost:3000", "sec-fetch-site": "same-site"}
    with suture(openai={"upstream": url + "/v1"}, allowed_origins=["http://localhost:3000"]) as base:
        assert httpx.post(base + "/v1/chat/completions", json=CHAT, headers=own, timeout=10).status_code == 200
        other = {"origin": "http://localhost:4000", "sec-fetch-site": "same-site"}
        assert httpx.post(base + "/v1/chat/completions", json=CHAT, headers=other, timeout=10).status_code == 403
    assert len(upstream.received) == 1


def test_sdks_and_the_page_s_own_requests_are_unchanged(keyed: tuple[EchoUpstream, str]) -> None:
    upstream, base = keyed
    client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
    assert upstream.received[-1].header("authorization") == [f"Bearer {OWN_KEY}"]
    # The page's own form and script: same-origin, as the browser says of them.
    same = {"origin": base, "sec-fetch-site": "same-origin"}
    assert httpx.post(base + "/suture/login", data={"key": "x"}, headers=same).status_code == 200
    # Chromium's form post under the page's no-referrer policy: Origin null, Sec-Fetch-Site says same-origin.
    null = {"origin": "null", "sec-fetch-site": "same-origin"}
    assert httpx.post(base + "/suture/login", data={"key": "x"}, headers=null).status_code == 200
    assert httpx.get(base + "/suture/", headers={"sec-fetch-site": "none"}).status_code == 200


def test_a_non_loopback_bind_answers_any_host_name_by_default() -> None:
    # A container or a sidecar is reached by names nobody listed (its service name); browsers'
    # cross-site requests are still refused there.
    from proxy.browsers import BrowserGuard

    guard = BrowserGuard("0.0.0.0")
    assert guard.check([(b"host", b"suture:8787")]) is None
    refusal = guard.check([(b"host", b"suture:8787"), (b"origin", b"https://attacker.example")])
    assert refusal is not None and refusal.status == 403
    narrowed = BrowserGuard("0.0.0.0", ["suture"])
    refusal = narrowed.check([(b"host", b"attacker.example")])
    assert narrowed.check([(b"host", b"suture:8787")]) is None and refusal is not None and refusal.status == 421


def test_allowed_hosts_and_origins_read_comma_separated_variables_and_refuse_mistakes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SUTURE_ALLOWED_HOSTS", "suture.internal, .corp.example")
    monkeypatch.setenv("SUTURE_ALLOWED_ORIGINS", "http://localhost:3000")
    settings = load_settings(None)
    assert settings.allowed_hosts == ("suture.internal", ".corp.example")
    assert settings.allowed_origins == ("http://localhost:3000",)
    monkeypatch.setenv("SUTURE_ALLOWED_ORIGINS", "localhost:3000/app")
    with pytest.raises(ConfigError, match=r"allowed_origins.*is not a web origin"):
        load_settings(None)
    monkeypatch.delenv("SUTURE_ALLOWED_ORIGINS")
    monkeypatch.setenv("SUTURE_ALLOWED_HOSTS", "suture.internal:8787")
    with pytest.raises(ConfigError, match=r"allowed_hosts.*is not a host name"):
        load_settings(None)
    monkeypatch.delenv("SUTURE_ALLOWED_HOSTS")
    with pytest.raises(ValueError, match="is not a host name"):
        Settings(allowed_hosts=["http://suture.internal"])


def test_suture_captures_serve_answers_only_loopback_names(tmp_path: Path) -> None:
    (tmp_path / "captures").mkdir()
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proxy.cli",
            "captures",
            "serve",
            "--dir",
            str(tmp_path / "captures"),
            "--port",
            str(port),
        ],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        rebound = httpx.get(f"http://127.0.0.1:{port}/", headers={"host": f"attacker.example:{port}"})
        assert rebound.status_code == 421
        cross = httpx.get(f"http://127.0.0.1:{port}/", headers={"sec-fetch-site": "cross-site"})
        assert cross.status_code == 403
    finally:
        process.terminate()
        process.wait(10)


def test_serve_warns_when_it_holds_a_key_and_asks_clients_for_none() -> None:
    from tests.proxy.test_serve import _serve_briefly

    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env |= {"SUTURE_OPENAI_UPSTREAM_API_KEY": OWN_KEY, "SUTURE_SHUTDOWN_GRACE_SECONDS": "1"}
    status, lines, stderr = _serve_briefly("--config", "config/suture.yaml", env=env, port=free_port())
    assert status == 0, stderr
    [warning] = [line for line in lines if line.get("provider") == "openai" and line["level"] == "warning"]
    assert "SUTURE_OPENAI_CLIENT_API_KEY" in str(warning["event"])
    assert OWN_KEY not in stderr
    env["SUTURE_OPENAI_CLIENT_API_KEY"] = "client-key-for-browsers-test"
    status, lines, stderr = _serve_briefly("--config", "config/suture.yaml", env=env, port=free_port())
    assert status == 0, stderr
    assert not [line for line in lines if line.get("provider") == "openai" and line["level"] == "warning"]


# A real browser: a page on another origin tries what any site could.

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: install Debian's chromium package")
def test_a_page_in_a_real_browser_cannot_spend_the_key_or_read_the_page(keyed: tuple[EchoUpstream, str]) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    upstream, base = keyed
    target = base.replace("127.0.0.1", "localhost")  # another site than the attacker's 127.0.0.1 page
    attack = f"""<!doctype html><html><body><form id=f method=post enctype=multipart/form-data
      action="{target}/v1/files"><input name=purpose value=batch></form><script>
      async function go() {{
        const out = {{}};
        await fetch("{target}/v1/chat/completions", {{method: "POST", mode: "no-cors",
          body: new Blob([JSON.stringify({CHAT!r})])}}).catch(e => out.blob = String(e));
        await fetch("{target}/v1/chat/completions", {{method: "POST", mode: "no-cors",
          headers: {{"content-type": "text/plain"}}, body: JSON.stringify({CHAT!r})}}).catch(e => out.text = String(e));
        try {{ out.page = await (await fetch("{target}/suture/")).text(); }} catch (e) {{ out.read = String(e); }}
        return out;
      }}
    </script></body></html>""".replace("'", '"')
    evil = Starlette(routes=[Route("/", lambda request: HTMLResponse(attack))])
    with running_server(evil) as evil_url, sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            tab.goto(evil_url + "/")
            result: dict[str, Any] = tab.evaluate("go()")
            tab.evaluate("document.getElementById('f').submit()")
            tab.wait_for_load_state()
            time.sleep(0.5)  # the form's navigation, had it been let through, reaches the upstream by now
        finally:
            browser.close()
    assert "page" not in result  # CORS keeps the answer from the page; and Suture never sent one
    assert upstream.received == [], [r.path for r in upstream.received]
