"""Which rules fired, and which API a request spoke, without opening anything: the answer's
``x-suture-rules`` beside ``x-suture-repairs``, and the page's route column telling OpenAI Chat
from Responses, live and from capture files alike (issue 41)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.ui.ring import entry_from_capture, route_name
from tests._support.page import INTERRUPTED_CHAT, TOOLS
from tests._support.proxy_e2e import suture
from tests._support.seed_transcripts import anthropic_seed, responses_seed
from tests._support.servers import running_server


@pytest.fixture(scope="module")
def emulator() -> Iterator[str]:
    with running_server(build_emulator_app(EmulatorConfig())) as url:
        yield url


def _repair_codes(url: str, request_id: str) -> list[str]:
    capture = httpx.get(url + f"/suture/requests/{request_id}/capture.json").json()
    return list(dict.fromkeys(r["code"] for r in capture["repairs"]))


def test_a_repaired_answer_names_its_rules_and_a_clean_one_none(emulator: str) -> None:
    with suture(openai={"upstream": emulator + "/v1"}, ui={"enabled": True}) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=INTERRUPTED_CHAT, tools=TOOLS)  # type: ignore[arg-type]
        assert raw.headers["x-suture-repairs"] == "3"
        rules = raw.headers["x-suture-rules"].split(",")
        # The codes of the repairs made, each once, in the order they were made.
        assert rules == _repair_codes(url, raw.headers["x-suture-request-id"]) and "TP001" in rules
        clean = client.chat.completions.with_raw_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hello"}]
        )
        assert clean.headers["x-suture-repairs"] == "0" and "x-suture-rules" not in clean.headers


def test_the_anthropic_sdk_sees_the_rules_too(emulator: str) -> None:
    with suture(anthropic={"upstream": emulator}) as url:
        client = anthropic.Anthropic(base_url=url, api_key="sk-ant-test", max_retries=0)
        raw = client.messages.with_raw_response.create(
            model="claude-opus-4-7", max_tokens=64, messages=anthropic_seed()
        )
        rules = raw.headers["x-suture-rules"].split(",")
        # The orphan call answered first; each code once however many repairs it made.
        assert rules[0] == "TP001" and len(set(rules)) == len(rules) <= int(raw.headers["x-suture-repairs"])


def test_the_route_column_tells_chat_from_responses(emulator: str) -> None:
    with suture(openai={"upstream": emulator + "/v1"}, ui={"enabled": True}) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
        client.chat.completions.create(model="gpt-4o", messages=INTERRUPTED_CHAT, tools=TOOLS)  # type: ignore[arg-type]
        client.responses.create(model="gpt-4o", input=responses_seed())  # type: ignore[arg-type]
        page = httpx.get(url + "/suture/").text
    columns = re.findall(r'data-route="([^"]*)"', page)
    assert sorted(columns) == ["openai chat", "openai responses"]


def test_a_capture_file_names_its_route_as_the_live_page_does() -> None:
    record = {"request_id": "r1", "route": "openai", "api": "openai-responses", "status": 400, "repairs": []}
    assert entry_from_capture(1, record, b"").route == "openai responses"
    assert route_name("anthropic", "anthropic-messages") == "anthropic"
    assert route_name("", "openai-chat") == ""
