"""The commit-msg hook: subjects of at most 72 characters, a blank line before the body."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HOOK = Path(__file__).resolve().parent.parent / ".ci" / "commit-msg"


def run(tmp_path: Path, message: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run([sys.executable, str(HOOK), str(path)], capture_output=True, text=True, check=False)


def test_a_short_subject_and_a_body_pass(tmp_path: Path) -> None:
    done = run(tmp_path, "Named profiles for four providers\n\nThe detail, and figures: 13 of 13.\n# a comment\n")
    assert done.returncode == 0, done.stderr


def test_a_long_subject_fails_naming_its_length(tmp_path: Path) -> None:
    done = run(tmp_path, "x" * 73 + "\n")
    assert done.returncode == 1
    assert "73 characters; at most 72" in done.stderr


def test_a_body_glued_to_the_subject_fails(tmp_path: Path) -> None:
    done = run(tmp_path, "Subject\nbody right after it\n")
    assert done.returncode == 1
    assert "blank line" in done.stderr


def test_an_empty_message_fails(tmp_path: Path) -> None:
    assert run(tmp_path, "# only comments\n\n").returncode == 1
