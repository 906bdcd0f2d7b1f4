"""Request ids through Suture (issue 38, item 3), with the official SDKs in front of the emulator.

The provider's id is the one its support asks for, and the one each SDK reports (the OpenAI SDK's
``_request_id`` and error ``request_id`` read ``x-request-id``; Anthropic's read ``request-id``): it
reaches the client unchanged. Suture's own id is ``x-suture-request-id``, the one its access line,
captures and page name. Before this change, the OpenAI SDK reported Suture's id.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import openai
import orjson
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.proxy_e2e import LogLines, suture
from tests._support.servers import running_server

BROKEN_CHAT = [
    {"role": "user", "content": "list files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
    },
    {"role": "user", "content": "stop, do something else"},
]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with contextlib.ExitStack() as stack:
        chat = stack.enter_context(running_server(build_emulator_app(EmulatorConfig(provider="openai"))))
        messages = stack.enter_context(running_server(build_emulator_app(EmulatorConfig(provider="anthropic"))))
        yield stack.enter_context(suture(openai={"upstream": chat + "/v1"}, anthropic={"upstream": messages}))


def test_the_openai_sdk_reports_the_provider_s_id_and_suture_s_is_beside_it(base: str, logs: LogLines) -> None:
    with openai.OpenAI(base_url=base + "/v1", api_key="sk-ids", max_retries=0) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
        completion = raw.parse()
    provider_id = completion._request_id
    assert provider_id is not None and provider_id.startswith("req_")  # the emulator's, as OpenAI's
    suture_id = raw.headers["x-suture-request-id"]
    assert suture_id != provider_id
    [line] = logs.records("suture.access", "request", request_id=suture_id)
    assert line["status"] == 200


def test_an_openai_error_names_the_provider_s_id(tmp_path: Path) -> None:
    with (
        running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as chat,
        suture(openai={"upstream": chat + "/v1", "mode": "report"}, capture={"dir": tmp_path}) as url,
        openai.OpenAI(base_url=url + "/v1", api_key="sk-ids", max_retries=0) as client,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        client.chat.completions.create(model="gpt-4o", messages=BROKEN_CHAT)  # type: ignore[arg-type]
    error = refused.value
    assert error.request_id is not None and error.request_id.startswith("req_")
    suture_id = error.response.headers["x-suture-request-id"]
    deadline = time.monotonic() + 5
    while not list(tmp_path.glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    [capture] = [orjson.loads(p.read_bytes()) for p in tmp_path.glob("*.json")]
    assert capture["request_id"] == suture_id  # captures name Suture's id


def test_the_anthropic_sdk_reports_the_provider_s_id(base: str) -> None:
    with anthropic.Anthropic(base_url=base, api_key="sk-ant-ids", max_retries=0) as client:
        message = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    assert message._request_id is not None and message._request_id.startswith("req_")


def test_suture_s_own_answers_carry_its_id_in_both_headers(base: str) -> None:
    with (
        openai.OpenAI(base_url=base + "/v1", api_key="sk-ids", max_retries=0) as client,
        pytest.raises(openai.APIStatusError) as refused,
    ):
        client.post("/chat/completions", body=None, cast_to=dict, options={"headers": {"content-type": "text/plain"}})
    assert refused.value.status_code == 415
    headers = refused.value.response.headers
    assert headers["x-request-id"] == headers["x-suture-request-id"]  # no provider answered
    assert refused.value.request_id == headers["x-suture-request-id"]
