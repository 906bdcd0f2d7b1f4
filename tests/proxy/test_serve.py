"""`suture serve` as a user runs it: a real process, settings from file and env, JSON logs."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests._support.proxy_e2e import EchoUpstream
from tests._support.servers import free_port, running_server, wait_until_ready

REPO = Path(__file__).resolve().parents[2]


def test_serve_runs_the_proxy_and_logs_json_lines() -> None:
    echo = EchoUpstream()
    port = free_port()
    with running_server(echo.app()) as upstream:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
        env["SUTURE_OPENAI_UPSTREAM"] = upstream + "/v1"
        env["SUTURE_SHUTDOWN_GRACE_SECONDS"] = "2"
        process = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli", "serve", "--config", "config/suture.yaml", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_ready(base, process)
            with httpx.Client(base_url=base) as client:
                response = client.post(
                    "/v1/chat/completions",
                    json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                    headers={"authorization": "Bearer sk-serve-canary"},
                )
                assert response.status_code == 200
                # The upstream's own `server` header is relayed; Suture adds none of its own.
                assert response.headers.get_list("server") == ["uvicorn"]
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    # A graceful stop on SIGTERM is a success (uvicorn alone would re-raise the signal: -15).
    assert process.returncode == 0
    assert echo.received[0].path == "/v1/chat/completions"
    lines = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    access = [line for line in lines if line["logger"] == "suture.access" and line["path"] == "/v1/chat/completions"]
    assert access[0]["status"] == 200
    assert access[0]["upstream_status"] == 200
    assert "sk-serve-canary" not in stderr
    events = [line["event"] for line in lines]
    assert any("Finished server process" in event for event in events), events


# `suture serve` with faults injected where the request path calls the sanitizer and the
# validator: the sanitizer's failure is caught and logged (the request goes on unrepaired), the
# validator's escapes the endpoint (a 500, and uvicorn's "Exception in ASGI application").
FAULTY_SERVE = """
import sys

import proxy.app
import proxy.routes.transcripts
from proxy import cli


def boom(*args, **kwargs):
    raise RuntimeError("injected fault")


proxy.routes.transcripts.sanitize = boom
proxy.routes.transcripts.validate = boom
if "--fail-at-start" in sys.argv:
    sys.argv.remove("--fail-at-start")
    proxy.app.Upstream = boom
sys.exit(cli.main(sys.argv[1:]))
"""


def run_faulty_serve(log_level: str, *extra: str, request: bool = True) -> tuple[int, list[dict[str, object]]]:
    """Run FAULTY_SERVE, send it one Anthropic request in strict mode; its exit status and log lines."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env.update(SUTURE_LOG_LEVEL=log_level, SUTURE_MODE="strict", SUTURE_SHUTDOWN_GRACE_SECONDS="2")
    process = subprocess.Popen(
        [sys.executable, "-c", FAULTY_SERVE, "serve", "--config", "config/suture.yaml", "--port", str(port), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if request:
            base = f"http://127.0.0.1:{port}"
            wait_until_ready(base, process)
            response = httpx.post(
                base + "/v1/messages",
                json={"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
                headers={"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"},
            )
            assert response.status_code == 500
            process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    # Every line is one JSON object, whatever failed.
    return process.returncode, [json.loads(line) for line in stderr.splitlines()]


@pytest.mark.parametrize("log_level", ["info", "debug"])
def test_an_error_is_one_line_with_its_type_and_a_traceback_only_at_debug(log_level: str) -> None:
    _, lines = run_faulty_serve(log_level)
    errors = {str(line["event"]).strip(): line for line in lines if "error" in line}
    sanitizer = errors["sanitizer failed; forwarding the request unchanged"]
    endpoint = errors["Exception in ASGI application"]
    for line in (sanitizer, endpoint):
        assert line["level"] == "error"
        assert line["error"] == "RuntimeError: injected fault"
        if log_level == "debug":
            assert "Traceback (most recent call last)" in str(line["traceback"])
            assert "in boom" in str(line["traceback"])  # the frame that raised
        else:
            assert "traceback" not in line
    assert sanitizer["logger"] == "suture.repair" and endpoint["logger"] == "uvicorn.error"
    assert endpoint["event"] == "Exception in ASGI application"  # uvicorn's own ends in a line break


@pytest.mark.parametrize("log_level", ["info", "debug"])
def test_a_start_up_failure_is_one_line_with_its_type_and_a_traceback_only_at_debug(log_level: str) -> None:
    # Starlette hands uvicorn a failed lifespan as traceback text, which uvicorn logs as the message.
    status, lines = run_faulty_serve(log_level, "--fail-at-start", request=False)
    assert status == 3
    [failure] = [line for line in lines if "injected fault" in json.dumps(line)]
    assert failure["level"] == "error"
    assert failure["error"] == "RuntimeError: injected fault"
    if log_level == "debug":
        assert "Traceback (most recent call last)" in str(failure["traceback"])
    else:
        assert "Traceback" not in json.dumps(failure)


def _serve_briefly(*args: str, env: dict[str, str], port: int) -> tuple[int | None, list[dict[str, object]], str]:
    """Start `suture serve`, wait until it is ready (or has exited), stop it; its status and log lines."""
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with contextlib.suppress(Exception):  # it exited: its status says why
            wait_until_ready(f"http://127.0.0.1:{port}", process)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return process.returncode, lines, stderr


def test_serve_says_what_it_runs_and_warns_of_misspelt_variables() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env |= {
        "SUTURE_OPENAI_MODE": "strict",
        "SUTURE_OPENAI_UPSTREAM_API_KEY": "sk-suture-start-line-canary",
        "SUTURE_OPENAI_CLIENT_API_KEY": "client-start-line-canary",
        "SUTURE_PASSTROUGH": "false",
        "SUTURE_SHUTDOWN_GRACE_SECONDS": "1",
        "SUTURE_BIN": "/opt/suture/bin",  # the user's own variable: close to no setting
    }
    status, lines, stderr = _serve_briefly("--config", "config/suture.yaml", env=env, port=free_port())
    assert status == 0, stderr
    [start] = [line for line in lines if line["event"] == "starting"]
    assert start["config"] == "config/suture.yaml"
    assert start["version"]
    assert start["passthrough"] is True
    assert start["page"] is None and start["tracing"] is False
    providers = start["providers"]
    assert isinstance(providers, dict)
    assert providers["openai"] == {
        "upstream": "https://api.openai.com/v1",
        "mode": "strict",
        "own_key": True,
        "client_key": True,
    }
    assert providers["anthropic"]["mode"] == "repair"
    assert providers["bedrock"] == "off"
    # Ignored by the settings (it names no field), so it would otherwise go unnoticed.
    [warning] = [line for line in lines if line.get("variable") == "SUTURE_PASSTROUGH"]
    assert warning["level"] == "warning"
    assert "did you mean SUTURE_PASSTHROUGH?" in str(warning["event"])
    # A SUTURE_* name near no setting is the user's own: not warned of on every start.
    assert not [line for line in lines if line.get("variable") == "SUTURE_BIN"]
    assert "canary" not in stderr


def test_the_start_line_gives_the_pages_address_when_it_is_on() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env |= {"SUTURE_UI_ENABLED": "true", "SUTURE_UI_PATH": "/look", "SUTURE_SHUTDOWN_GRACE_SECONDS": "1"}
    port = free_port()
    status, lines, stderr = _serve_briefly("--config", "config/suture.yaml", env=env, port=port)
    assert status == 0, stderr
    [start] = [line for line in lines if line["event"] == "starting"]
    assert start["page"] == f"http://127.0.0.1:{port}/look/"


def test_a_port_already_taken_is_one_line_and_status_2() -> None:
    import socket

    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, _, stderr = _serve_briefly(env=env, port=port)
    assert status == 2
    assert stderr.strip().splitlines()[-1] == f"suture: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert "Traceback" not in stderr
