"""Retries: none by default; a route's ``retries`` setting retries connect errors and 429/5xx
answers, a bounded number of times, and only before any byte of an answer reached the client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from proxy.settings import ConfigError, Settings, load_settings
from tests._support.faulty_upstream import FaultyUpstream
from tests._support.proxy_e2e import LogLines, suture
from tests._support.servers import free_port

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


def _post(base: str, **extra: Any) -> httpx.Response:
    with httpx.Client(timeout=10) as client:
        return client.post(base + "/v1/chat/completions", json={**CHAT, **extra})


def _retrying(url: str, **retries: Any) -> Any:
    return suture(openai={"upstream": url + "/v1", "retries": {"backoff": 0, **retries}})


def test_nothing_is_retried_by_default(faulty: FaultyUpstream) -> None:
    assert Settings().openai.retries.attempts == 1
    faulty.plan[:] = ["status:503", "status:429:0"]
    with suture(openai={"upstream": faulty.url + "/v1"}) as base:
        assert _post(base).status_code == 503
        assert _post(base).status_code == 429
    assert len(faulty.seen) == 2


def test_5xx_and_429_are_retried_with_the_same_body(faulty: FaultyUpstream, logs: LogLines) -> None:
    faulty.plan[:] = ["status:503", "status:429:0", "status:500"]
    with _retrying(faulty.url, attempts=4) as base:
        response = _post(base)
    assert response.status_code == 200
    assert response.json()["id"] == "chatcmpl-faulty"
    assert len(faulty.seen) == 4
    assert len({s.body for s in faulty.seen}) == 1
    reasons = [r["reason"] for r in logs.records("suture.upstream", "retrying upstream request")]
    assert reasons == ["503", "429", "500"]


def test_retries_are_bounded_and_the_last_answer_is_relayed(faulty: FaultyUpstream) -> None:
    faulty.plan[:] = ["status:502", "status:503", "status:504"]
    with _retrying(faulty.url, attempts=2) as base:
        response = _post(base)
    assert response.status_code == 503
    assert response.json()["error"]["message"] == "upstream says 503"
    assert len(faulty.seen) == 2


def test_only_what_the_route_names_is_retried(faulty: FaultyUpstream) -> None:
    faulty.plan[:] = ["status:500", "status:429:0", "ok"]
    with _retrying(faulty.url, attempts=3, when=["429"]) as base:
        assert _post(base).status_code == 500
        assert _post(base).status_code == 200
    assert len(faulty.seen) == 3


def test_a_long_retry_after_is_left_to_the_client(faulty: FaultyUpstream) -> None:
    faulty.plan[:] = ["status:429:120"]
    with _retrying(faulty.url, attempts=3) as base:
        started = time.monotonic()
        response = _post(base)
    assert time.monotonic() - started < 2
    assert (response.status_code, response.headers["retry-after"]) == (429, "120")
    assert len(faulty.seen) == 1


def test_a_short_retry_after_is_waited_out(faulty: FaultyUpstream) -> None:
    faulty.plan[:] = ["status:429:1"]
    with _retrying(faulty.url, attempts=2) as base:
        started = time.monotonic()
        assert _post(base).status_code == 200
    assert time.monotonic() - started >= 1


def test_connect_errors_are_retried_until_the_upstream_is_up(logs: LogLines) -> None:
    late = FaultyUpstream(port=free_port())
    url = f"http://127.0.0.1:{late.port}"
    with suture(
        openai={"upstream": url + "/v1", "retries": {"attempts": 6, "when": ["connect"], "backoff": 0.1}}
    ) as base:
        up = threading.Event()

        def start_late() -> None:
            time.sleep(0.4)
            with late.running():
                up.set()
                time.sleep(5)

        threading.Thread(target=start_late, daemon=True).start()
        response = _post(base)
        assert up.is_set()
    assert response.status_code == 200
    assert len(late.seen) == 1
    assert {r["reason"] for r in logs.records("suture.upstream", "retrying upstream request")} == {"ConnectError"}


def test_connect_retries_give_up_with_a_502() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with _retrying(dead, attempts=3, when=["connect"]) as base:
        response = _post(base)
    assert response.status_code == 502
    assert "ConnectError" in response.json()["error"]["message"]


def test_an_answer_already_relayed_is_never_retried(faulty: FaultyUpstream) -> None:
    with (
        _retrying(faulty.url, attempts=3) as base,
        httpx.Client(timeout=5) as client,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        client.post(base + "/v1/chat/completions", json={**CHAT, "stream": True}, headers={"x-fault": "cut-stream"})
    assert len(faulty.seen) == 1


@pytest.mark.parametrize(
    ("yaml", "expected"),
    [
        ("openai:\n  upstream: http://x\n  retries: {attempts: 0}\n", "openai.retries.attempts"),
        ("openai:\n  upstream: http://x\n  retries: {when: [timeout]}\n", "openai.retries.when.0"),
        ("openai:\n  upstream: http://x\n  retries: {tries: 2}\n", "openai.retries.tries: unknown setting"),
    ],
)
def test_retry_settings_fail_loudly(tmp_path: Any, yaml: str, expected: str) -> None:
    path = tmp_path / "suture.yaml"
    path.write_text(yaml)
    with pytest.raises(ConfigError, match=expected.replace(".", r"\.")):
        load_settings(path)
    path.write_text(
        "openai:\n  upstream: http://x\n  retries: {attempts: 3, when: [connect, 429, 5xx], backoff: 0.5}\n"
    )
    retries = load_settings(path).openai.retries
    assert (retries.attempts, retries.when, retries.backoff) == (3, ("connect", "429", "5xx"), 0.5)
