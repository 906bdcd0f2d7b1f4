"""`suture serve --workers N`: N processes on one port, each building its app from the environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from proxy.cli import main
from proxy.server import WORKER_CONFIG_ENV, app_from_env
from tests._support.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def workers_of(pid: int) -> list[int]:
    """The worker processes of ``pid`` (multiprocessing's spawned children, not its resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                # /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after ')'.
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(fields[1]) == pid and b"spawn_main" in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts worker processes through /proc")
def test_two_workers_answer_and_stop_gracefully() -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env["SUTURE_SHUTDOWN_GRACE_SECONDS"] = "2"
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port), "--workers", "2"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            deadline = time.monotonic() + 30
            while len(workers_of(process.pid)) < 2 or not _healthy(client):
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "two workers did not come up"
                time.sleep(0.05)
            assert all(client.get("/healthz").status_code == 200 for _ in range(20))
        workers = workers_of(process.pid)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert len(workers) == 2
    assert process.returncode == 0
    lines = [json.loads(line) for line in stderr.splitlines() if line.strip()]  # JSON lines, every one
    assert sum("Started server process" in line["event"] for line in lines) == 2


def _healthy(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def test_workers_with_bad_config_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--workers", "2", "--config", str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suture: config error: config file not found") and err.count("\n") == 1


def test_workers_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--workers", "0"]) == 2
    assert capsys.readouterr().err == "suture: --workers must be at least 1, not 0\n"


def test_app_from_env_reads_the_parents_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "suture.yaml"
    config.write_text("mode: strict\n")
    monkeypatch.setenv(WORKER_CONFIG_ENV, str(config))
    app = app_from_env()
    assert isinstance(app, Starlette)
    assert app.state.suture.settings.mode == "strict"


def test_app_from_env_with_a_broken_file_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(WORKER_CONFIG_ENV, str(tmp_path / "gone.yaml"))
    with pytest.raises(SystemExit) as exited:
        app_from_env()
    assert exited.value.code == 3  # uvicorn's supervisor stops every worker on it
    err = capsys.readouterr().err
    assert err.startswith("suture: config error: config file not found") and err.count("\n") == 1
