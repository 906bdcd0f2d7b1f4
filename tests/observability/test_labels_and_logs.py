"""The metrics' model and upstream labels, the access line's model and upstream, build and process
metrics, and ``log_format``: through a running Suture, with the official SDKs as clients."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai
import pytest

from proxy.labels import MAX_NAME_LENGTH, ModelLabels
from proxy.logs import TextFormatter, log
from proxy.observers.metrics import ExchangeMetrics
from tests._support.observed import BROKEN_ANTHROPIC, BROKEN_OPENAI, observed, rejecting_app
from tests._support.proxy_e2e import LogLines, wait_for
from tests._support.servers import free_port, running_server, wait_until_ready

REPO = Path(__file__).resolve().parents[2]


def test_requests_and_repairs_are_labelled_by_model_and_upstream(tmp_path: Path, logs: LogLines) -> None:
    with observed(tmp_path) as s:
        with s.openai() as client:
            client.chat.completions.create(**BROKEN_OPENAI)
            client.chat.completions.create(**BROKEN_OPENAI)
        with s.anthropic() as client:
            client.messages.create(**BROKEN_ANTHROPIC)
        wait_for(lambda: len(logs.records("suture.access", "request")) >= 3)
        metrics = httpx.get(s.url + "/metrics").text
    assert (
        'suture_requests_total{method="POST",model="gpt-4o-mini",route="/v1/chat/completions",status="200",upstream="openai"} 2.0'
        in metrics
    )
    assert (
        'suture_requests_total{method="POST",model="claude-haiku-4-5",route="/v1/messages",status="200",upstream="anthropic"} 1.0'
        in metrics
    )
    assert (
        'suture_repairs_total{code="TP001",mode="repair",model="gpt-4o-mini",rule="orphan-tool-call",upstream="openai"} 2.0'
        in metrics
    )
    assert 'suture_request_duration_seconds_count{route="/v1/messages",upstream="anthropic"} 1.0' in metrics
    access = [a for a in logs.records("suture.access", "request") if a["path"] != "/metrics"]
    assert sorted((a["model"], a["upstream"]) for a in access) == [
        ("claude-haiku-4-5", "anthropic"),
        ("gpt-4o-mini", "openai"),
        ("gpt-4o-mini", "openai"),
    ]


def test_the_upstream_is_named_never_a_url_in_every_log_line(tmp_path: Path, logs: LogLines) -> None:
    with observed(tmp_path, openai={"upstream": "http://127.0.0.1:9/v1"}) as s, s.openai() as client:
        # Nothing listens on port 9: the upstream's failure is logged, by name.
        with pytest.raises(openai.APIStatusError):
            client.chat.completions.create(**BROKEN_OPENAI)
        wait_for(lambda: logs.records("suture.access", "request"))
    failed = logs.records("suture.upstream", "upstream failed")
    assert failed and all(line["upstream"] == "openai" for line in failed)
    assert logs.records("suture.access", "request")[0]["upstream"] == "openai"


def scrape_until(url: str, needle: str, timeout: float = 5) -> str:
    """/metrics once it holds ``needle`` (an exchange is counted after its last byte is sent)."""
    deadline = time.monotonic() + timeout
    while True:
        text = httpx.get(url + "/metrics").text
        if needle in text or time.monotonic() > deadline:
            return text
        time.sleep(0.02)


def test_a_repaired_transcript_the_provider_still_rejects_is_counted_by_upstream(tmp_path: Path) -> None:
    with running_server(rejecting_app()) as rejecter:
        upstreams = {"rejecter": {"protocol": "openai", "base_url": rejecter + "/v1"}}
        routes = [{"match": "gpt-rejected", "upstream": "rejecter"}]
        with observed(tmp_path, upstreams=upstreams, routes=routes) as s, s.openai() as client:
            valid = {**BROKEN_OPENAI, "model": "gpt-rejected", "messages": BROKEN_OPENAI["messages"][:1]}
            for body in ({**BROKEN_OPENAI, "model": "gpt-rejected"}, valid):
                with pytest.raises(openai.BadRequestError):
                    client.chat.completions.create(**body)
            metrics = scrape_until(s.url, 'suture_upstream_responses_total{status="400",upstream="rejecter"} 2.0')
    # Only the repaired one: a 400 to an untouched transcript is the client's own.
    assert 'suture_repaired_rejections_total{upstream="rejecter"} 1.0' in metrics
    assert 'suture_upstream_responses_total{status="400",upstream="rejecter"} 2.0' in metrics
    assert 'model="gpt-rejected"' in metrics and 'upstream="rejecter"' in metrics


def test_model_labels_are_a_bounded_set(tmp_path: Path, logs: LogLines) -> None:
    weird = ["x" * (MAX_NAME_LENGTH + 1), "gpt 4o; DROP", "first-seen-2", "first-seen-3"]
    with observed(tmp_path) as s:
        # Room for two names beyond the route table's (a hundred by default).
        observers = s.app.state.suture.observers
        next(o for o in observers if isinstance(o, ExchangeMetrics)).model_labels = ModelLabels(
            ["routed-model"], max_first_seen=2
        )
        with s.openai() as client:
            for model in ["routed-model", "first-seen-1", *weird, "first-seen-1"]:
                client.chat.completions.create(**{**BROKEN_OPENAI, "model": model})
        wait_for(lambda: len(logs.records("suture.access", "request")) >= 7)
        metrics = httpx.get(s.url + "/metrics").text
    labels = re.findall(r'suture_requests_total\{[^}]*model="([^"]*)"[^}]*\} (\S+)', metrics)
    assert sorted(labels) == [
        ("first-seen-1", "2.0"),
        ("first-seen-2", "1.0"),
        ("other", "3.0"),
        ("routed-model", "1.0"),
    ]
    # The access line keeps the client's own name, cut short when it is long.
    assert {a["model"] for a in logs.records("suture.access", "request")} >= {"gpt 4o; DROP", "first-seen-3"}


def test_route_table_names_are_known_labels_and_globs_are_not() -> None:
    labels = ModelLabels(["claude-*", "gpt-4o", "gemini-2.?-pro"], max_first_seen=0)
    assert [labels(m) for m in ["gpt-4o", "claude-x", "gemini-2.5-pro", None]] == ["gpt-4o", "other", "other", ""]


def test_build_info_and_process_metrics(tmp_path: Path) -> None:
    with observed(tmp_path) as s:
        metrics = httpx.get(s.url + "/metrics").text
    python = ".".join(map(str, sys.version_info[:3]))
    assert re.search(rf'suture_build_info{{python="{re.escape(python)}",version="[^"]+"}} 1.0', metrics)
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "python_info"):
        assert re.search(rf"^{name}(\{{.*\}})? ", metrics, re.M), name


def test_text_log_format_is_one_readable_line_per_event() -> None:
    record = logging.LogRecord("suture.access", logging.INFO, __file__, 1, "request", None, None)
    record.fields = {"request_id": "abc", "status": 200, "mode": None, "upstream": "openai", "detail": 'a "b" c'}
    line = TextFormatter().format(record)
    assert re.fullmatch(
        r'\S+Z INFO    suture\.access request request_id=abc status=200 upstream=openai detail="a \\"b\\" c"', line
    ), line
    assert log  # the same fields as the JSON lines: callers do not change


def test_serve_with_text_log_format_writes_text_lines(tmp_path: Path) -> None:
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "SUTURE_LOG_FORMAT": "text", "SUTURE_LOG_LEVEL": "debug"}
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}", process)
        httpx.get(f"http://127.0.0.1:{port}/healthz")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    lines = stderr.splitlines()
    assert lines and not any(line.startswith("{") for line in lines), stderr
    assert any(re.search(r" DEBUG   suture\.access request .*path=/healthz .*status=200", line) for line in lines), (
        stderr
    )
    assert any(" INFO    suture starting " in line for line in lines), stderr
