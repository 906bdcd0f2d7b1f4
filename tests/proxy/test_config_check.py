"""`suture config check`: the settings serve would run with, where each came from, secrets never
shown, problems in one line with status 2, and `--probe` reaching each upstream."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests._support.proxy_e2e import EchoUpstream
from tests._support.servers import running_server

REPO = Path(__file__).resolve().parents[2]


def config_check(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    return subprocess.run(
        [sys.executable, "-m", "proxy.cli", "config", "check", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_each_value_says_where_it_came_from_and_secrets_are_never_shown(tmp_path: Path) -> None:
    config = tmp_path / "suture.yaml"
    config.write_text("port: 9100\nopenai:\n  mode: report\n", encoding="utf-8")
    done = config_check(
        "--config",
        str(config),
        env={"SUTURE_MODE": "strict", "SUTURE_OPENAI_UPSTREAM_API_KEY": "sk-config-check-canary"},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"config file: {config}"
    assert "port = 9100  [file]" in lines
    assert "mode = strict  [environment (SUTURE_MODE)]" in lines
    assert "openai.mode = report  [file]" in lines
    assert "openai.upstream = https://api.openai.com/v1  [default]" in lines
    assert "openai.upstream_api_key = (set, not shown)  [environment (SUTURE_OPENAI_UPSTREAM_API_KEY)]" in lines
    assert "policy.bridge_text = (Tool results received.)  [default]" in lines
    assert "sk-config-check-canary" not in done.stdout + done.stderr


def test_a_problem_is_one_line_and_status_2(tmp_path: Path) -> None:
    config = tmp_path / "suture.yaml"
    config.write_text("openai:\n  upstream: not a url\n", encoding="utf-8")
    done = config_check("--config", str(config), env={})
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("suture: config error: ") and "openai.upstream" in line


def test_probe_reports_each_upstream_and_fails_when_one_is_unreachable(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: refused
        with running_server(EchoUpstream().app()) as live:
            env = {
                "SUTURE_OPENAI_UPSTREAM": live + "/v1",
                "SUTURE_ANTHROPIC_UPSTREAM": dead,
                "SUTURE_GEMINI_UPSTREAM": live,
            }
            done = config_check("--probe", env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    probes = [line for line in done.stdout.splitlines() if line.startswith("probe ")]
    assert any(line.startswith(f"probe openai {live}/v1: reachable in ") for line in probes), probes
    assert f"probe anthropic {dead}: unreachable (Connection refused)" in probes
    assert not any(line.startswith("probe bedrock") for line in probes)  # not enabled: not probed
