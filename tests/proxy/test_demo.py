"""`suture demo` as a newcomer runs it (issue 42): a real process, nothing configured, no network."""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from proxy import cli
from proxy.commands import demo
from proxy.commands.demo import ANTHROPIC_BODY, OPENAI_BODY, Answer, Outcome
from sanitizer import validate
from tests._support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
PAGE = re.compile(r"^The page \(.*\): (http://127\.0\.0\.1:(\d+)/suture/)$", re.MULTILINE)
# Whatever would take the demo off this machine: a real upstream, strict mode, a proxy that is not there.
AMBIENT = {
    "SUTURE_OPENAI_UPSTREAM": "https://api.exampel.invalid/v1",
    "SUTURE_ANTHROPIC_UPSTREAM": "https://api.exampel.invalid",
    "SUTURE_MODE": "strict",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
}


def _environ() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_") and k.upper() != "NO_PROXY"}
    return {**environ, **AMBIENT, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_COLOR": "1"}


def _demo(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "demo", *args],
        cwd=REPO,
        env=_environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def test_demo_check_shows_the_providers_400_then_suture_s_200_and_its_repair() -> None:
    process = _demo("--check")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert err == ""
    # The emulator's 400 is the provider's own, word for word, for each SDK.
    for body, api in ((OPENAI_BODY, "openai-chat"), (ANTHROPIC_BODY, "anthropic-messages")):
        [violation] = validate(body, api=api)
        assert f"Straight to the emulator: 400 Bad Request: {violation.message}\n" in out
    assert "== OpenAI SDK " in out and "== Anthropic SDK " in out
    assert out.count("Through Suture:           200 OK") == 2
    assert out.count("Repairs (x-suture-repairs: 1):\n  TP001 orphan-tool-call [message ") == 2
    assert out.count("Before:\n") == 2 and out.count("After:\n") == 2
    assert "sk-suture-demo-dummy-key  a dummy" in out
    match = PAGE.search(out)
    assert match is not None, out
    page, port = match.groups()
    assert f"On the page: {page}requests/" in out
    assert f"\n  OPENAI_BASE_URL=http://127.0.0.1:{port}/v1\n  ANTHROPIC_BASE_URL=http://127.0.0.1:{port}\n" in out
    assert out.endswith("200 through Suture, which repaired TP001\n")
    assert "Ctrl-C" not in out


def test_demo_serves_the_page_and_the_base_urls_until_sigint() -> None:
    port = free_port()
    process = _demo("--port", str(port))
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in process.stdout or ():
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        seen = ""
        deadline = time.monotonic() + 120
        while not seen.endswith("Ctrl-C stops it.\n"):
            try:
                seen += lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"the demo was not ready within 120 s (exit status {process.poll()}):\n{seen}")
        match = PAGE.search(seen)
        assert match is not None, seen
        assert match.group(2) == str(port)
        with httpx.Client(trust_env=False, timeout=10) as client:
            listing = client.get(match.group(1))
            assert listing.status_code == 200
            assert "/suture/requests/" in listing.text  # the demo's requests are listed
            # An agent pointed at it, with any key, gets its answers from the emulator.
            answer = client.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                headers={"authorization": "Bearer anything"},
            )
            assert answer.status_code == 200
            assert answer.headers["x-suture-repairs"] == "0"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(timeout=5)
    with process:  # closes the pipes
        assert process.stderr is not None
        assert process.stderr.read() == ""
    rest = ""
    while not lines.empty():
        rest += lines.get_nowait()
    assert rest == "\nsuture demo: stopped\n"


def test_demo_on_a_port_already_taken_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert cli.main(["demo", "--check", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"suture demo: cannot listen on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1
    assert cli.main(["demo", "--port", "70000"]) == 2
    assert "--port must be between 1 and 65535" in capsys.readouterr().err


def test_demo_check_fails_in_one_line_when_an_answer_is_not_what_it_shows(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = Answer(400, "the emulator's refusal", {})
    answers = {
        "OpenAI SDK": Answer(200, "hello", {"x-suture-repairs": "1"}),
        "Anthropic SDK": Answer(400, "refused all the same", {"x-suture-repairs": "0"}),
    }
    monkeypatch.setattr(demo, "_run", lambda sdk, *args: Outcome(sdk, "POST /v1/x", refused, answers[sdk], None, None))
    assert demo._demonstrate("http://e", "http://s", "http://s/suture/", check=True) == 1
    out, err = capsys.readouterr()
    assert err == "suture demo: failed: Anthropic SDK: through Suture: 400 Bad Request: refused all the same\n"
    assert "Through Suture:           200 OK; the emulated model answered: hello" in out


@pytest.mark.parametrize(
    ("direct", "through", "problem"),
    [
        (Answer(400, "no", {}), Answer(200, "ok", {"x-suture-repairs": "1"}), None),
        (
            Answer(200, "ok", {}),
            Answer(200, "ok", {"x-suture-repairs": "1"}),
            "SDK: straight to the emulator: 200 OK instead of 400",
        ),
        (Answer(400, "no", {}), Answer(None, "refused", {}), "SDK: through Suture: no answer: refused"),
        (
            Answer(400, "no", {}),
            Answer(200, "ok", {"x-suture-repairs": "0"}),
            "SDK: through Suture: 200, but nothing was repaired (x-suture-repairs: 0)",
        ),
    ],
)
def test_an_outcome_names_what_it_failed_to_show(direct: Answer, through: Answer, problem: str | None) -> None:
    assert Outcome("SDK", "POST /v1/x", direct, through, None, None).problem() == problem
