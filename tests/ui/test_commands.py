"""`suture fix --diff`, `suture captures show --diff` and `suture captures serve`: the same diff, offline."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import orjson
import pytest

from proxy import cli
from proxy.capture import CaptureStore
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.ui.page import CaptureSource, build_page
from proxy.ui.terminal import cells
from tests._support.page import INTERRUPTED_CHAT, TOOLS
from tests._support.proxy_e2e import suture
from tests._support.servers import free_port, running_server

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A capture directory holding one repaired request, made by a running Suture; and its request id."""
    directory = tmp_path_factory.mktemp("captures")
    with contextlib.ExitStack() as stack:
        upstream = stack.enter_context(running_server(build_emulator_app(EmulatorConfig(provider="openai"))))
        url = stack.enter_context(suture(openai={"upstream": upstream + "/v1"}, capture={"dir": directory}))
        client = openai.OpenAI(base_url=url + "/v1", api_key="sk-offline", max_retries=0)
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=INTERRUPTED_CHAT, tools=TOOLS)  # type: ignore[arg-type]
        deadline = time.monotonic() + 10
        while not CaptureStore(directory).files():
            assert time.monotonic() < deadline
            time.sleep(0.05)
    yield directory, raw.headers["x-suture-request-id"]


def test_fix_diff_prints_before_and_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = tmp_path / "broken.json"
    payload.write_bytes(orjson.dumps({"model": "gpt-4o", "messages": INTERRUPTED_CHAT}))
    assert cli.main(["fix", str(payload), "--diff"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Before:\n") and "\nAfter:\n" in out
    assert '"model"' not in out  # the view, not the body
    synthetic = next(line for line in out.splitlines() if "synthetic" in line)
    assert synthetic.startswith("+ ") and "result call_slow_1" in synthetic
    moved = [line for line in out.splitlines() if line.startswith("> ") and "was #" in line]  # the after side
    assert len(moved) == 2 and any("停！换个做法" in line for line in moved)
    # The moved lines' notes start at the same column, the Chinese one included.
    assert len({cells(line[: line.index("was #")]) for line in moved}) == 1


def test_captures_show_diff(captured: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    directory, _ = captured
    [path] = CaptureStore(directory).files()
    assert cli.main(["captures", "show", path.stem, "--dir", str(directory), "--diff"]) == 0
    out = capsys.readouterr().out
    assert "synthetic" in out and "I noticed that you have interrupted me" in out and "\x1b[" not in out


def test_the_offline_page_shows_the_same_diff(captured: tuple[Path, str]) -> None:
    directory, request_id = captured
    with running_server(build_page(CaptureSource(CaptureStore(directory)))) as url:
        listing = httpx.get(url + "/")
        assert f'data-id="{request_id}"' in listing.text and "data-events" not in listing.text
        detail = httpx.get(url + f"/requests/{request_id}").text
        assert 'data-role="tool" data-marks="synthetic"' in detail
        assert detail.count('data-marks="moved"') == 4  # two messages, on each side
        assert httpx.get(url + f"/requests/{request_id}/capture.json").json()["request_id"] == request_id
        assert httpx.post(url + "/").status_code == 405  # read-only


def test_captures_serve_runs_on_loopback(captured: tuple[Path, str]) -> None:
    directory, request_id = captured
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "captures", "serve", "--dir", str(directory), "--port", str(port)],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        assert request_id in page.text
    finally:
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()
