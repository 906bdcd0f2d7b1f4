"""The page in a real browser (the system's chromium, driven by Playwright), with the official
SDKs as Suture's clients: live rows, the before/after view, filters, untrusted text, the key.

Screenshots of the list and of a request page go to docs/ with UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.page import CLEAN_CHAT, INTERRUPTED_CHAT, TOOLS, XSS
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:  # CI installs Debian's chromium (.ci/run); no browser download works here
    pytest.skip("no chromium on PATH: install Debian's chromium package", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="the test extra's playwright is not installed")

DOCS = Path(__file__).resolve().parents[2] / "docs"
KEY = "browser-ui-key-0123456789"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.problems = []  # every dialog, console error and page error: none is expected anywhere
    tab.on("dialog", lambda dialog: (tab.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    tab.on("console", lambda msg: tab.problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: tab.problems.append(f"pageerror: {exc}"))
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture(scope="module")
def upstreams() -> Iterator[dict[str, str]]:
    with (
        running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as chat,
        running_server(build_emulator_app(EmulatorConfig(provider="anthropic"))) as messages,
    ):
        yield {"openai": chat + "/v1", "anthropic": messages}


def chat(url: str, messages: list[dict[str, Any]], **kw: Any) -> Any:
    # Closed once answered (its body is read by then): a client left to the garbage collector
    # warns of its open socket in whichever test happens to collect it.
    with openai.OpenAI(base_url=url + "/v1", api_key="sk-browser-test", max_retries=0) as client:
        return client.chat.completions.with_raw_response.create(model="gpt-4o", messages=messages, **kw)


def shot(tab: Any, name: str, tmp_path: Path) -> None:
    target = DOCS if os.environ.get("UPDATE_SCREENSHOTS") else tmp_path
    target.mkdir(exist_ok=True)
    tab.screenshot(path=str(target / name), full_page=True)


def test_a_broken_request_appears_live_and_its_page_shows_the_repair(
    page: Any, upstreams: dict[str, str], tmp_path: Path
) -> None:
    with suture(openai={"upstream": upstreams["openai"]}, ui={"enabled": True}) as url:
        chat(url, CLEAN_CHAT)
        page.goto(url + "/suture/")
        assert page.locator("tr.request").count() == 1
        page.wait_for_timeout(300)  # the event stream is open
        raw = chat(url, INTERRUPTED_CHAT, tools=TOOLS)
        answered = time.monotonic()
        request_id = raw.headers["x-suture-request-id"]
        row = page.locator(f'tr.request[data-id="{request_id}"]')
        row.wait_for(timeout=2000)
        assert time.monotonic() - answered < 2
        assert row.locator(".badge").all_inner_texts() == ["TP002", "TP001"]
        assert row.locator(".outcome").inner_text() == "complete"
        assert page.locator("tr.request").count() == 2  # added without a reload
        assert page.locator("#total").inner_text() == "2"
        page.reload()
        assert page.locator("svg.chart").is_visible()  # the counts of the last hour, drawn by the server
        shot(page, "ui-list.png", tmp_path)
        row = page.locator(f'tr.request[data-id="{request_id}"]')

        row.locator("a.open").click()
        page.wait_for_url(f"**/suture/requests/{request_id}")
        after = page.locator("#after li.message")
        roles = after.evaluate_all("rows => rows.map(r => [r.dataset.role, r.dataset.marks, r.innerText])")
        call = next(i for i, (_, _, text) in enumerate(roles) if "call_slow_1" in text and "call slow_tool" in text)
        role, marks, text = roles[call + 1]
        assert (role, marks) == ("tool", "synthetic") and "call_slow_1" in text and "interrupted" in text
        recovery = page.locator("#after li.message", has_text="I noticed that you have interrupted me")
        assert recovery.get_attribute("data-marks") == "moved"
        assert "was #2" in recovery.inner_text()
        assert "now #" in page.locator('#before li.message[data-index="2"]').inner_text()
        summaries = page.locator("#repairs .rule-summary").all_inner_texts()
        assert any("A tool call that no result answers anywhere in the transcript" in s for s in summaries)
        assert page.locator("#check-command").input_value() == f"suture check suture-{request_id}.json"
        capture = page.request.get(url + page.locator("#download").get_attribute("href"))
        assert capture.ok and capture.json()["request_id"] == request_id
        shot(page, "ui-request.png", tmp_path)
        page.locator("#repairs a.badge").first.click()
        page.wait_for_url("**/suture/rules#TP002")
        assert page.locator("#TP002").is_visible()
        assert page.problems == []


def test_filters(page: Any, upstreams: dict[str, str], request: pytest.FixtureRequest) -> None:
    settings = {
        "openai": {"upstream": upstreams["openai"], "mode": "report"},  # broken bodies go on: the provider says 400
        "anthropic": {"upstream": upstreams["anthropic"]},
        "ui": {"enabled": True},
    }
    with suture(**settings) as url:
        clean = chat(url, CLEAN_CHAT).headers["x-suture-request-id"]
        with pytest.raises(openai.BadRequestError) as refused:
            chat(url, INTERRUPTED_CHAT, tools=TOOLS)
        rejected = refused.value.response.headers["x-suture-request-id"]
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-browser", max_retries=0)
        request.addfinalizer(client.close)  # used to the end; closed, or it warns of its socket
        messages = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5",
            max_tokens=16,
            messages=[
                {"role": "user", "content": "run it"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "run", "input": {}}],
                },
                {"role": "user", "content": "never mind"},
            ],
        )
        repaired = messages.headers["x-suture-request-id"]

        def listed() -> set[str]:
            return set(page.locator("tr.request").evaluate_all("rows => rows.map(r => r.dataset.id)"))

        page.goto(url + "/suture/")
        assert listed() == {clean, rejected, repaired}
        page.locator('input[name="rejected"]').check()  # submits the form
        page.wait_for_url("**rejected=1**")
        assert listed() == {rejected}
        assert page.locator(f'tr[data-id="{rejected}"] .outcome').inner_text() == "rejected"
        page.goto(url + "/suture/?repaired=1")
        assert listed() == {rejected, repaired}
        page.goto(url + "/suture/")
        page.locator('select[name="route"]').select_option("anthropic")
        page.wait_for_url("**route=anthropic**")
        assert listed() == {repaired}
        page.goto(url + "/suture/")
        page.locator('select[name="rule"]').select_option("TP002")
        page.wait_for_url("**rule=TP002**")
        assert listed() == {rejected}
        # New rows respect the filters in force: a clean request is not added, a repaired one is.
        page.goto(url + "/suture/?repaired=1")
        page.wait_for_timeout(300)
        late_clean = chat(url, CLEAN_CHAT).headers["x-suture-request-id"]
        late = client.messages.with_raw_response.create(
            model="claude-sonnet-4-5",
            max_tokens=16,
            messages=[
                {"role": "user", "content": "run it"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "run", "input": {}}]},
                {"role": "user", "content": "stop"},
            ],
        ).headers["x-suture-request-id"]
        page.locator(f'tr[data-id="{late}"]').wait_for(timeout=2000)
        assert late_clean not in listed()
        assert page.problems == []


def test_untrusted_transcript_text_renders_as_text_and_runs_nothing(page: Any, upstreams: dict[str, str]) -> None:
    with suture(openai={"upstream": upstreams["openai"]}, ui={"enabled": True}) as url:
        page.goto(url + "/suture/")
        page.wait_for_timeout(300)
        hostile = [{**INTERRUPTED_CHAT[0], "content": XSS}, *INTERRUPTED_CHAT[1:]]
        with openai.OpenAI(base_url=url + "/v1", api_key="sk-x", max_retries=0) as client:
            raw = client.chat.completions.with_raw_response.create(
                model=XSS, messages=hostile, tools=TOOLS, extra_headers={"x-request-id": "xss-request-1"}
            )
        request_id = raw.headers["x-suture-request-id"]
        row = page.locator(f'tr[data-id="{request_id}"]')
        row.wait_for(timeout=2000)  # the live row: built by the script
        assert row.locator("td").nth(2).inner_text() == XSS
        page.reload()  # the same row rendered by the server
        assert page.locator(f'tr[data-id="{request_id}"] td').nth(2).inner_text() == XSS
        page.goto(url + f"/suture/requests/{request_id}")
        texts = page.locator("#before li.message .text").all_inner_texts()
        assert texts[0] == XSS
        assert page.locator("main img, main script").count() == 0
        page.wait_for_timeout(300)
        assert page.problems == []


def test_without_the_key_on_a_non_loopback_bind_the_page_is_refused(page: Any, upstreams: dict[str, str]) -> None:
    settings = {"host": "0.0.0.0", "openai": {"upstream": upstreams["openai"]}, "ui": {"enabled": True, "api_key": KEY}}
    with suture(**settings) as url:
        request_id = chat(url, INTERRUPTED_CHAT, tools=TOOLS).headers["x-suture-request-id"]
        answer = page.goto(url + f"/suture/requests/{request_id}")
        assert answer.status == 401
        assert request_id not in page.content()
        page.goto(url + "/suture/")
        page.locator('input[name="key"]').fill("not-the-key")
        page.locator("form button").click()
        assert page.locator("#failed").is_visible()
        page.locator('input[name="key"]').fill(KEY)
        page.locator("form button").click()
        page.locator(f'tr[data-id="{request_id}"]').wait_for(timeout=2000)
        # The browser reports each 401 answer as a console error; nothing else may appear.
        assert [p for p in page.problems if "401" not in p] == []


def test_the_offline_capture_page_shows_the_same_diff(page: Any, upstreams: dict[str, str], tmp_path: Path) -> None:
    from proxy.capture import CaptureStore
    from proxy.ui.page import CaptureSource, build_page

    def sides() -> list[list[str]]:
        return [
            page.locator(f"#{side} li.message").evaluate_all(
                "rows => rows.map(r => [r.dataset.index, r.dataset.role, r.dataset.marks, r.innerText].join('|'))"
            )
            for side in ("before", "after")
        ]

    with suture(openai={"upstream": upstreams["openai"]}, ui={"enabled": True}, capture={"dir": tmp_path}) as url:
        request_id = chat(url, INTERRUPTED_CHAT, tools=TOOLS).headers["x-suture-request-id"]
        page.goto(url + f"/suture/requests/{request_id}")
        live = sides()
        deadline = time.monotonic() + 10
        while not CaptureStore(tmp_path).files():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    with running_server(build_page(CaptureSource(CaptureStore(tmp_path)))) as offline:
        page.goto(offline + "/")
        page.locator(f'tr[data-id="{request_id}"] a.open').click()
        page.wait_for_url(f"**/requests/{request_id}")
        assert sides() == live
        assert any("|synthetic|" in row for row in live[1])
        assert page.problems == []
