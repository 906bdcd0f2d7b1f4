"""Profiles learnt from refusals, through a running Suture: an upstream Suture has no profile for
(the emulator enforcing a random subset of other providers' rules, all listed in one refusal)
refuses the first request, which Suture repairs and retries; Suture remembers the fix, so the next
request reaches the upstream once; after ``suture profiles forget`` it pays the refusal again.
The official openai SDK is the client; the profiles file is the one the CLI reads."""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import IN_CAPTURE_DIR
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import free_port, running_server

KEY = "sk-client-canary-0123456789"
MODEL = "mystery-coder-2026-11-01"
# Rules of other OpenAI-compatible providers this transcript breaks, each refused with its own text.
BROKEN_BY = ("mistral.M1", "mistral.M3", "groq.X5", "fireworks.extra-input")


def conversation(turn: int) -> list[dict[str, Any]]:
    """An agent's transcript at ``turn``: a call with an OpenAI-style id, a message key the agent
    keeps (``cot_id``), a user message right after the tool's result."""
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Read a.py"},
        {
            "role": "assistant",
            "content": "Reading.",
            "cot_id": "cot-41",
            "tool_calls": [
                {
                    "id": "call_abc123def456",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc123def456", "content": "print(1)"},
        {"role": "user", "content": f"Now b.py (turn {turn})"},
    ]


@dataclass
class Stack:
    record: Path
    suture: str
    profiles: Path

    def statuses(self) -> list[int]:
        return [r["status"] for r in recorded_requests(self.record)]

    def ask(self, turn: int) -> str:
        client = openai.OpenAI(base_url=self.suture + "/v1", api_key=KEY, max_retries=0, timeout=10)
        with client:
            answer = client.chat.completions.create(model=MODEL, messages=conversation(turn))  # type: ignore[arg-type]
        return answer.choices[0].message.content or ""


@contextlib.contextmanager
def stack(tmp_path: Path, enforce: tuple[str, ...], port: int | None = None, **settings: Any) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, enforce=enforce))
    captures = tmp_path / "captures"
    with (
        running_server(app, port=port, timeout_graceful_shutdown=1) as emu,
        suture(
            upstreams={"mystery": {"protocol": "openai", "base_url": emu + "/v1", **settings.pop("mystery", {})}},
            routes=[{"match": "mystery-*", "upstream": "mystery"}],
            capture={"dir": str(captures)},
            **settings,
        ) as url,
    ):
        yield Stack(record, url, captures / IN_CAPTURE_DIR)


def profiles_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proxy.cli", "profiles", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )


def test_an_unknown_upstreams_rules_are_learnt_once_and_forgotten_on_demand(tmp_path: Path, logs: LogLines) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    enforce = tuple(rng.sample(BROKEN_BY, rng.randint(1, len(BROKEN_BY))))
    with stack(tmp_path, enforce) as s:
        # The first request pays one refusal, repaired from its text.
        assert "turn 1" in s.ask(1), (seed, enforce)
        assert s.statuses() == [400, 200], (seed, enforce)
        [learnt] = wait_for(lambda: logs.records("suture.repair", "fix learnt"))
        assert learnt["upstream"] == "mystery" and learnt["models"] == "mystery-coder*"
        assert wait_for(s.profiles.exists)
        # Learnt: the next turn reaches the upstream once, repaired before its first attempt.
        assert "turn 2" in s.ask(2), (seed, enforce)
        assert s.statuses() == [400, 200, 200], (seed, enforce)
        sent = recorded_requests(s.record)[-1]["body"]["messages"]
        assert [m.get("content") for m in sent if m["role"] == "user"][-1] == "Now b.py (turn 2)"
        assert any(m.get("content") == "print(1)" for m in sent if m["role"] == "tool")

        listing = profiles_cli("list", "--file", str(s.profiles))
        assert listing.returncode == 0, listing.stderr
        assert "mystery" in listing.stdout and "mystery-coder*" in listing.stdout
        for code in enforce:
            assert code in listing.stdout, (seed, enforce, listing.stdout)

        forgot = profiles_cli("forget", "--upstream", "mystery", "--file", str(s.profiles))
        assert forgot.returncode == 0 and "forgot" in forgot.stdout, forgot.stderr
        # The running proxy sees the file change within a second; then the refusal is paid again.
        wait_for(lambda: False, timeout=1.2)
        assert "turn 3" in s.ask(3), (seed, enforce)
        assert s.statuses() == [400, 200, 200, 400, 200], (seed, enforce)


def test_the_learnt_fix_survives_a_restart_and_the_metric_counts_it(tmp_path: Path) -> None:
    # A lesson is of an upstream's name and where it points: the restarted upstream is at the same URL.
    port = free_port()
    with stack(tmp_path, ("fireworks.extra-input",), port) as s:
        s.ask(1)
        assert wait_for(s.profiles.exists)
        metrics = openai.OpenAI(base_url=s.suture, api_key=KEY)._client.get(s.suture + "/metrics").text
        assert 'suture_lessons_learnt_total{fix="rules",upstream="mystery"} 1.0' in metrics
    record = tmp_path / "emulator.jsonl"
    record.unlink()
    with stack(tmp_path, ("fireworks.extra-input",), port) as s:
        assert "turn 2" in s.ask(2)
        assert s.statuses() == [200]
        metrics = openai.OpenAI(base_url=s.suture, api_key=KEY)._client.get(s.suture + "/metrics").text
        assert 'suture_lessons_applied_total{fix="PV009",upstream="mystery"} 1.0' in metrics


def test_a_fix_the_config_states_wins_over_a_learnt_one(tmp_path: Path, logs: LogLines) -> None:
    stated = [{"models": "mystery-*", "apply": [{"fix": "rules", "codes": ["groq.X5"]}]}]
    port = free_port()
    with stack(tmp_path, ("fireworks.extra-input",), port) as s:
        s.ask(1)
        assert wait_for(s.profiles.exists)
    (tmp_path / "emulator.jsonl").unlink()
    # groq.X5's rule removes the unsupported key too; the learnt fireworks fix is not applied.
    with stack(tmp_path, ("fireworks.extra-input",), port, mystery={"fixes": stated}) as s:
        s.ask(2)
        assert s.statuses() == [200]
        applied = wait_for(lambda: logs.records("suture.repair", "repair", code="PV009"))
        assert applied and all("stated in the configuration" in r["detail"] for r in applied)
        listing = profiles_cli("list", "--config", str(_config(tmp_path, s, stated)))
        assert "overridden by the configuration" in listing.stdout, listing.stdout + listing.stderr


def _config(tmp_path: Path, s: Stack, stated: list[dict[str, Any]]) -> Path:
    import yaml

    path = tmp_path / "suture.yaml"
    mystery = {"protocol": "openai", "base_url": "http://127.0.0.1:9/v1", "fixes": stated}
    path.write_text(yaml.safe_dump({"capture": {"dir": str(tmp_path / "captures")}, "upstreams": {"mystery": mystery}}))
    return path


def test_an_upstream_that_does_not_learn_pays_every_refusal(tmp_path: Path) -> None:
    with stack(tmp_path, ("fireworks.extra-input",), mystery={"learn": False}) as s:
        s.ask(1)
        s.ask(2)
        assert s.statuses() == [400, 200, 400, 200]
        assert not s.profiles.exists()


def test_export_writes_a_section_the_config_accepts(tmp_path: Path) -> None:
    from proxy.settings import Settings

    with stack(tmp_path, ("mistral.M1", "fireworks.extra-input")) as s:
        s.ask(1)
        assert wait_for(s.profiles.exists)
    exported = profiles_cli("export", "--file", str(s.profiles))
    assert exported.returncode == 0, exported.stderr
    import yaml

    section = yaml.safe_load(exported.stdout)
    mystery = section["upstreams"]["mystery"]
    assert mystery["fixes"][0]["models"] == "mystery-coder*"
    codes = {code for fix in mystery["fixes"][0]["apply"] for code in fix.get("codes", ())}
    assert codes == {"mistral.M1", "fireworks.extra-input"}
    settings = Settings(upstreams={"mystery": {"protocol": "openai", "base_url": "http://127.0.0.1:9", **mystery}})
    assert settings.upstreams["mystery"].fixes[0].lessons()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["forget"], "forget what?"),
        (["forget", "--models", "x*"], "forget what?"),
        (["show", "ffff"], "no learnt fix with id"),
    ],
)
def test_the_cli_says_what_is_wrong(tmp_path: Path, argv: list[str], said: str) -> None:
    path = tmp_path / IN_CAPTURE_DIR
    path.parent.mkdir()
    path.write_text(json.dumps({"version": 1, "profiles": []}))
    done = profiles_cli(*argv, "--file", str(path))
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr


def test_a_damaged_profiles_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / IN_CAPTURE_DIR
    path.parent.mkdir()
    path.write_text('{"version": 1, "profiles": [{"upstream": "x"}]}')
    done = profiles_cli("list", "--file", str(path))
    assert done.returncode == 2 and "profiles[0]" in done.stderr and "Traceback" not in done.stderr


def test_the_page_lists_what_was_learnt(tmp_path: Path) -> None:
    import httpx

    with stack(tmp_path, ("fireworks.extra-input",), ui={"enabled": True}) as s:
        empty = httpx.get(s.suture + "/suture/profiles")
        assert empty.status_code == 200 and "Nothing learnt yet" in empty.text
        s.ask(1)
        assert wait_for(s.profiles.exists)
        page = httpx.get(s.suture + "/suture/profiles")
    assert page.status_code == 200
    assert "mystery-coder*" in page.text and "fireworks.extra-input" in page.text
    assert "Extra inputs are not permitted" in page.text  # the refusal that taught it
    assert str(s.profiles) in page.text
