"""The `suture` command line: help, config errors as one line and exit 2, emulate's arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from proxy import cli

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suture.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_serve_with_bad_config_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--config", str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("suture: config error: config file not found")
    assert err.count("\n") == 1
    assert cli.main(["serve", "--config", str(write(tmp_path, "openai:\n  nope: 1\n"))]) == 2
    assert "openai.nope: unknown setting" in capsys.readouterr().err


def test_help_lists_each_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "serve" in out
    assert "emulate" in out


def test_emulate_hands_its_arguments_to_the_emulator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import proxy.emulator

    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(proxy.emulator, "main_emulate", lambda *args: calls.append(args))
    record = tmp_path / "r.jsonl"
    argv = ["emulate", "--provider", "anthropic", "--port", "9999", "--record", str(record), "--stream-delay", "0.5"]
    assert cli.main(argv) == 0
    assert calls == [("anthropic", "127.0.0.1", 9999, record, 0.5, (), ())]


def test_emulate_enforces_other_providers_codes_and_refuses_an_unknown_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import proxy.emulator

    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(proxy.emulator, "main_emulate", lambda *args: calls.append(args))
    assert cli.main(["emulate", "--provider", "openai", "--enforce", "groq.X5, fireworks.extra-input"]) == 0
    assert calls[0][-1] == ("groq.X5", "fireworks.extra-input")
    assert cli.main(["emulate", "--provider", "openai", "--enforce", "openai.O1"]) == 2
    assert "unknown code(s) openai.O1" in capsys.readouterr().err


def test_emulate_reads_extra_rules_and_refuses_a_bad_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import proxy.emulator
    from proxy.emulator.extra_rules import ExtraRule

    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(proxy.emulator, "main_emulate", lambda *args: calls.append(args))
    rules = tmp_path / "rules.json"
    rules.write_text('[{"api": "openai-chat", "same_role_runs": true, "message": "messages[{n}]: alternate"}]')
    assert cli.main(["emulate", "--provider", "openai", "--extra-rules", str(rules)]) == 0
    assert calls[0][-2] == (ExtraRule(api="openai-chat", same_role_runs=True, message="messages[{n}]: alternate"),)
    rules.write_text('[{"api": "openai-chat", "message": "no condition"}]')
    assert cli.main(["emulate", "--provider", "openai", "--extra-rules", str(rules)]) == 2
    assert "rule 0: extra rule: give exactly one of" in capsys.readouterr().err


# Settings that once passed validation and then failed in the running server: a traceback in the
# lifespan (exit 3), a SettingsError traceback (exit 1), or a server that started and answered
# every request with a 502 or 401 (it ran until the timeout).
@pytest.mark.parametrize(
    ("env", "yaml", "expected"),
    [
        ({"SUTURE_OPENAI_UPSTREAM": "http://exa mple.com"}, "", "openai.upstream: the host 'exa mple.com' is not"),
        ({"SUTURE_OPENAI_UPSTREAM": "http://example.com/vü"}, "", "openai.upstream: the path must be ASCII"),
        ({"SUTURE_OPENAI_UPSTREAM": "http://example.com:70000"}, "", "openai.upstream: the port must be a number"),
        ({"SUTURE_OPENAI_RETRIES": "{attempts: 2"}, "", "SUTURE_OPENAI_RETRIES is not valid JSON"),
        ({}, "upstreams: {m: {protocol: openai, base_url: 'http://exa mple.com'}}\n", "upstreams.m.base_url: the host"),
        ({}, "upstreams: {m: {protocol: litellm, api_base: 'http://example.com:70000'}}\n", "upstreams.m.api_base"),
        ({"SUTURE_UPSTREAM_PROXY": "http://bob:canary@pro xy.corp:3128"}, "", "upstream_proxy: the host is not"),
        ({"SUTURE_OPENAI_UPSTREAM_API_KEY": "sk-canary\n"}, "", "openai.upstream_api_key: has a space or line break"),
        ({"SUTURE_CAPTURE_DIR": "AFILE"}, "", "is a file, not a directory"),
    ],
)
def test_serve_with_settings_the_server_cannot_use_exits_2_with_one_line(
    tmp_path: Path, env: dict[str, str], yaml: str, expected: str
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    environ.update({k: v.replace("AFILE", str(afile)) for k, v in env.items()}, SUTURE_PORT="0")
    process = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "serve", "--config", str(write(tmp_path, yaml or "{}\n"))],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert process.returncode == 2, process.stderr
    assert process.stderr.startswith("suture: config error: ")
    assert process.stderr.count("\n") == 1
    assert expected in process.stderr
    assert "canary" not in process.stderr


def test_version_names_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"suture {version('suture')}\n"
