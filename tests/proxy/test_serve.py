"""`suture serve` as a user runs it: a real process, settings from file and env, JSON logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.proxy.helpers import EchoUpstream
from tests.servers import free_port, running_server, wait_until_ready

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
