"""Real coding agents (Claude Code, Codex, opencode, aider) -> Suture -> the strict emulator.

Each agent is the released package, pinned, installed into a cache outside the repository on the
first run (tests/_support/agent_installs.py), and run as its own process, non-interactively, in a
temporary home and working directory. A test skips, saying why, when its agent cannot be installed
(no npm, the registry unreachable).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import agent_installs
from tests._support.proxy_e2e import clear_suture_env


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_suture_env(monkeypatch)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The agent's HOME: its config, sessions and caches, thrown away after the test."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The agent's working directory, where its tools write."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def claude() -> Path:
    return agent_installs.installed(agent_installs.CLAUDE_CODE)


@pytest.fixture(scope="session")
def codex() -> Path:
    return agent_installs.installed(agent_installs.CODEX)


@pytest.fixture(scope="session")
def opencode() -> Path:
    return agent_installs.installed(agent_installs.OPENCODE)


@pytest.fixture(scope="session")
def aider() -> Path:
    return agent_installs.installed(agent_installs.AIDER)
