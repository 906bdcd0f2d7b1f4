"""The real coding agents, pinned, installed once into a cache outside the repository.

``$SUTURE_AGENTS_CACHE`` names the cache (default ``$XDG_CACHE_HOME/suture-agents``, that is
``~/.cache/suture-agents``). Each agent gets its own directory, named after its version, and is
installed there only when missing: npm packages with the machine's own ``npm``, aider into a
virtual environment of its own (never the project's). An install runs under a file lock and
marks its directory complete last, so a concurrent run waits for it and an interrupted one is
started again rather than used half-made.

When an agent cannot be installed (no npm, the registry unreachable, a Python aider does not
support), :func:`installed` skips the test with the reason, once per run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

CACHE_ENV = "SUTURE_AGENTS_CACHE"
# A full install downloads a few hundred MB (Codex's package alone is ~420 MB unpacked).
INSTALL_TIMEOUT = 1800
# How long the registry may take to say whether the pinned version exists.
PROBE_TIMEOUT = 60


@dataclass(frozen=True)
class Agent:
    """One agent release: where it comes from and which executable runs it."""

    name: str
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    executable: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}" if self.registry == "npm" else f"{self.package}=={self.version}"

    def directory(self, cache: Path) -> Path:
        return cache / f"{self.name}-{self.version}"

    def binary(self, directory: Path) -> Path:
        if self.registry == "npm":
            return directory / "node_modules" / ".bin" / self.executable
        return directory / "venv" / "bin" / self.executable


# The versions issue 38 names; every one of them is on its registry.
CLAUDE_CODE = Agent("claude-code", "npm", "@anthropic-ai/claude-code", "2.1.197", "claude")
CODEX = Agent("codex", "npm", "@openai/codex", "0.171.0", "codex")
OPENCODE = Agent("opencode", "npm", "opencode-ai", "1.18.33", "opencode")
AIDER = Agent("aider", "pypi", "aider-chat", "0.86.2", "aider")

_DONE = ".installed"
_outcomes: dict[Agent, Path | str] = {}


def cache_dir() -> Path:
    """Where the agents live: ``$SUTURE_AGENTS_CACHE``, else ``$XDG_CACHE_HOME/suture-agents``."""
    if configured := os.environ.get(CACHE_ENV):
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "suture-agents"


def installed(agent: Agent) -> Path:
    """The agent's executable, installed first if missing; skips the test when it cannot be."""
    if agent not in _outcomes:
        _outcomes[agent] = _ensure(agent, cache_dir())
    outcome = _outcomes[agent]
    if isinstance(outcome, str):
        pytest.skip(outcome)
    return outcome


def _ensure(agent: Agent, cache: Path) -> Path | str:
    directory = agent.directory(cache)
    if (directory / _DONE).exists():
        return agent.binary(directory)
    cache.mkdir(parents=True, exist_ok=True)
    with _locked(cache / f".{agent.name}-{agent.version}.lock"):
        if (directory / _DONE).exists():  # another run installed it while this one waited
            return agent.binary(directory)
        # In place (a virtual environment cannot move), the mark written last: a directory
        # without it is an interrupted install, started again from nothing.
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir()
        started = time.monotonic()
        failure = _install_npm(agent, directory) if agent.registry == "npm" else _install_pypi(agent, directory)
        if failure is None and not agent.binary(directory).exists():
            failure = f"{agent.spec} installed no {agent.executable} executable"
        if failure is not None:
            shutil.rmtree(directory, ignore_errors=True)
            return failure
        (directory / _DONE).write_text(f"{agent.spec} installed in {time.monotonic() - started:.0f} s\n")
    return agent.binary(directory)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _install_npm(agent: Agent, into: Path) -> str | None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return f"{agent.name} needs node and npm, which are not on PATH"
    # Ask first, without retries: an unreachable registry is a quick skip, not minutes of backoff.
    probe = _run(
        [npm, "view", agent.spec, "version", "--fetch-retries=0", "--fetch-timeout=30000"], PROBE_TIMEOUT, into
    )
    if isinstance(probe, str):
        return f"npm registry unreachable for {agent.spec}: {probe}"
    if probe.returncode != 0 or agent.version not in probe.stdout:
        return f"npm registry unreachable or {agent.spec} missing: {_tail(probe)}"
    # The packages' postinstall scripts only copy the platform binary out of an optional
    # dependency that npm fetched from the same registry: they must run.
    done = _run(
        [
            npm,
            "install",
            "--prefix",
            str(into),
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--no-package-lock",
            agent.spec,
        ],
        INSTALL_TIMEOUT,
        into,
    )
    if isinstance(done, str) or done.returncode != 0:
        return f"npm install {agent.spec} failed: {done if isinstance(done, str) else _tail(done)}"
    return None


def _install_pypi(agent: Agent, into: Path) -> str | None:
    venv = into / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], PROBE_TIMEOUT, into)
    if isinstance(made, str) or made.returncode != 0:
        return f"no virtual environment for {agent.name}: {made if isinstance(made, str) else _tail(made)}"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    done = _run([*pip, "install", "--retries", "1", "--timeout", "60", "-q", agent.spec], INSTALL_TIMEOUT, into)
    if isinstance(done, str) or done.returncode != 0:
        return f"pip install {agent.spec} failed (PyPI unreachable?): {done if isinstance(done, str) else _tail(done)}"
    return None


def _run(argv: list[str], timeout: float, cwd: Path) -> subprocess.CompletedProcess[str] | str:
    try:
        return subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
    except subprocess.TimeoutExpired:
        return f"{Path(argv[0]).name} {argv[1]} took more than {timeout:.0f} s"
    except OSError as exc:
        return f"{argv[0]}: {exc}"


def _tail(result: subprocess.CompletedProcess[str]) -> str:
    """The gist of a failed command: its first error lines (npm's ``npm error code ECONNREFUSED``,
    pip's ``ERROR: ...``), else its last lines."""
    lines = [line.strip() for line in (result.stderr or result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() and line.lower() != "npm error"]
    return " / ".join(errors[:3] or lines[-3:]) or f"exit status {result.returncode}"
