"""`suture serve --workers 2`: every scrape counts every worker's requests, exactly.

Without prometheus_client's multiprocess mode each scrape reads whichever worker answers it
(the issue saw 8 five times and nothing once, after 8 requests)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests._support.observed import BROKEN_OPENAI, emulators
from tests._support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers through /proc")

REQUESTS = 24
KEY = {"authorization": "Bearer sk-test"}
SCRAPES = 30
CHAT = 'suture_requests_total{method="POST",model="gpt-4o-mini",route="/v1/chat/completions",status="200",upstream="openai"}'
REPAIRS = (
    'suture_repairs_total{code="TP001",mode="repair",model="gpt-4o-mini",rule="orphan-tool-call",upstream="openai"}'
)


def workers_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(fields[1]) == pid and b"spawn_main" in cmdline:
                found.append(int(entry.name))
    return sorted(found)


def value(metrics: str, series: str) -> float | None:
    for line in metrics.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def serve_two_workers(upstream: str, port: int, **env: str) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SUTURE_", "PROMETHEUS_"))}
    environ.update(PYTHONPATH=str(REPO), SUTURE_OPENAI_UPSTREAM=upstream, SUTURE_SHUTDOWN_GRACE_SECONDS="1", **env)
    return subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port), "--workers", "2"],
        cwd=REPO,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # so that a failed test can stop the workers too
    )


def until(predicate: object, process: subprocess.Popen[str], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert process.poll() is None, "the server exited"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def healthy(client: httpx.Client) -> bool:
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def metrics_dir_of(worker: int) -> str:
    environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
    [entry] = [e for e in environ if e.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return entry.split(b"=", 1)[1].decode()


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[str]:
    with emulators(tmp_path) as (oa, _):
        yield oa


def test_every_scrape_of_two_workers_gives_the_exact_count(upstream: str) -> None:
    port = free_port()
    process = serve_two_workers(upstream, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            until(lambda: len(workers_of(process.pid)) == 2 and healthy(client), process)
            workers = workers_of(process.pid)
            directory = metrics_dir_of(workers[0])
            for _ in range(REQUESTS):
                # A new connection each time, so that both workers take requests.
                assert (
                    httpx.post(
                        f"http://127.0.0.1:{port}/v1/chat/completions", json=BROKEN_OPENAI, headers=KEY
                    ).status_code
                    == 200
                )
            scraped = [client.get("/metrics", headers={"connection": "close"}).text for _ in range(SCRAPES)]
            assert [value(m, CHAT) for m in scraped] == [REQUESTS] * SCRAPES
            assert [value(m, REPAIRS) for m in scraped] == [REQUESTS] * SCRAPES
            assert {re.findall(r"suture_build_info\{[^}]*\} (\S+)", m)[0] for m in scraped} == {"1.0"}
            # Each live worker's process metrics, by pid; the pools' gauges summed over the live workers.
            pids = set(re.findall(r'process_resident_memory_bytes\{pid="(\d+)"\}', scraped[-1]))
            assert pids == {str(w) for w in workers}
            assert value(scraped[-1], 'suture_upstream_connections{state="busy",upstream="openai"}') == 0

            # A worker dies: uvicorn's supervisor replaces it; its counts stay, its live gauges go.
            assert (Path(directory) / f"gauge_livesum_{workers[0]}.db").exists()
            os.kill(workers[0], signal.SIGKILL)
            until(lambda: len(workers_of(process.pid)) == 2 and workers[0] not in workers_of(process.pid), process)
            until(lambda: not list(Path(directory).glob(f"gauge_livesum_{workers[0]}.db")), process, timeout=10)
            until(lambda: healthy(client), process)
            after = [client.get("/metrics", headers={"connection": "close"}).text for _ in range(10)]
            assert [value(m, CHAT) for m in after] == [REQUESTS] * 10
            assert all(f'pid="{workers[0]}"' not in m for m in after)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        stop(process)
    assert process.returncode == 0
    assert not Path(directory).exists()  # made by `suture serve`, removed by it


def test_the_operators_directory_is_emptied_at_start_and_kept(upstream: str, tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    (directory / "counter_999999.db").write_bytes(b"\0" * 16)  # a previous run's, long dead
    port = free_port()
    process = serve_two_workers(upstream, port, PROMETHEUS_MULTIPROC_DIR=str(directory))
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            until(lambda: len(workers_of(process.pid)) == 2 and healthy(client), process)
            assert not (directory / "counter_999999.db").exists()
            assert value(
                client.get("/metrics").text,
                'suture_requests_total{method="GET",model="",route="/healthz",status="200",upstream=""}',
            )
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        stop(process)
    assert directory.is_dir()
