"""Graceful shutdown of ``suture serve`` as a real process: on SIGTERM new connections are refused,
in-flight streams finish within the grace period, and the process exits 0; a stream longer than
the grace period is cut and its upstream request cancelled."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests._support.faulty_upstream import FaultyUpstream
from tests._support.servers import free_port, wait_until_ready

REPO = Path(__file__).resolve().parents[2]
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


def _serve(upstream: str, grace: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    env.update(SUTURE_OPENAI_UPSTREAM=upstream + "/v1", SUTURE_SHUTDOWN_GRACE_SECONDS=str(grace))
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until_ready(base, process)
    return process, base


def _refuses_connections(base: str, within: float) -> bool:
    port = int(base.rsplit(":", 1)[1])
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except ConnectionRefusedError:
            return True
        time.sleep(0.02)
    return False


def _stream_in_background(base: str, fault: str) -> tuple[threading.Event, dict[str, object]]:
    first = threading.Event()
    outcome: dict[str, object] = {}

    def read() -> None:
        body = b""
        try:
            with (
                httpx.Client(timeout=15) as client,
                client.stream("POST", base + "/v1/chat/completions", json=CHAT, headers={"x-fault": fault}) as response,
            ):
                for chunk in response.iter_raw():
                    body += chunk
                    first.set()
            outcome["complete"] = True
        except httpx.HTTPError as exc:
            outcome["error"] = type(exc).__name__
        finally:
            outcome["body"] = body
            first.set()

    threading.Thread(target=read, daemon=True).start()
    return first, outcome


def test_sigterm_finishes_in_flight_streams_refuses_new_connections_and_exits_0(faulty: FaultyUpstream) -> None:
    process, base = _serve(faulty.url, grace=10)
    try:
        first, outcome = _stream_in_background(base, "slow-stream:12:0.1")
        assert first.wait(5)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert _refuses_connections(base, within=2), "still accepting connections after SIGTERM"
        _, stderr = process.communicate(timeout=12)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr.decode()[-2000:]
    assert elapsed < 10
    assert outcome.get("complete") is True, outcome
    body = outcome["body"]
    assert isinstance(body, bytes) and body.endswith(b"data: [DONE]\n\n")
    assert body.count(b"data: ") == 12 + 5
    assert faulty.completed_streams == 1 and faulty.cancelled == 0


def test_a_stream_longer_than_the_grace_period_is_cut_and_its_upstream_cancelled(faulty: FaultyUpstream) -> None:
    process, base = _serve(faulty.url, grace=1)
    try:
        first, outcome = _stream_in_background(base, "slow-stream:200:0.1")
        assert first.wait(5)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
        elapsed = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert 0.9 < elapsed < 5
    deadline = time.monotonic() + 3
    while "body" not in outcome and time.monotonic() < deadline:
        time.sleep(0.02)
    assert outcome.get("error"), outcome  # cut, not passed off as a complete stream
    while faulty.cancelled == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert faulty.cancelled == 1 and faulty.completed_streams == 0


def test_a_port_in_use_is_a_failed_start_not_a_success() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
        result = subprocess.run(
            [sys.executable, "-m", "proxy.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            capture_output=True,
            timeout=20,
        )
    assert result.returncode != 0
