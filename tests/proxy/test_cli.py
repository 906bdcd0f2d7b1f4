"""The `suture` command line: help, config errors as one line and exit 2, emulate's arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy import cli


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
    assert calls == [("anthropic", "127.0.0.1", 9999, record, 0.5)]
