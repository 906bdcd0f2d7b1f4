"""Real coding agents -> Suture -> the strict emulator, on loopback, and how each agent is run.

A :class:`Stack` is the emulator (the provider), a Suture in front of it (capture directory and
page on), a :class:`RecordingProxy` in front of Suture (the bytes each agent sent), and a
:class:`Sink` every agent uses as its HTTP(S) proxy, so that nothing an agent sends leaves the
machine and any attempt to is seen. Each agent runs as its own process, non-interactively, with
a temporary ``HOME`` and XDG directories and fake keys, told not to update itself, report
telemetry or ask for a login; the ``*_run`` functions say how.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import ssl
import subprocess
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import trustme

from proxy.app import build_app
from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.settings import Settings
from tests._support.proxy_e2e import LogLines, captured_logs, wait_for
from tests._support.recording_proxy import RecordingProxy, Sink, recording_proxy, sink
from tests._support.servers import running_server

# Fake keys: the emulator wants one, Suture passes it through.
OPENAI_KEY = "sk-suture-agents-test"
ANTHROPIC_KEY = "sk-ant-suture-agents-test"
# Every agent run ends within this; they take a few seconds against the emulator.
RUN_TIMEOUT = 240


@dataclass
class Stack:
    emulator: str
    """The emulator's URL: what an agent would call without Suture."""
    suture: str
    front: str
    """The recording proxy in front of Suture: where the agents are pointed."""
    recorder: RecordingProxy
    record: Path
    captures: Path
    logs: LogLines
    sink_url: str
    sink: Sink
    ca_file: Path | None = None

    def requests(self) -> list[dict[str, Any]]:
        """What the emulator received, oldest first (its record without the disconnect events)."""
        if not self.record.exists():
            return []
        entries = [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines()]
        return [entry for entry in entries if "event" not in entry]

    def access(self) -> list[dict[str, Any]]:
        """Suture's access lines: one per request it answered."""
        return self.logs.records("suture.access", "request")

    def page(self, query: str = "") -> str:
        """Suture's page (``ui``), the list of requests, with ``query`` as its filter."""
        verify: ssl.SSLContext | bool = True
        if self.ca_file is not None:
            verify = ssl.create_default_context(cafile=str(self.ca_file))
        return httpx.get(f"{self.suture}/suture/{query}", verify=verify).text


@contextlib.contextmanager
def agent_stack(tmp: Path, provider: Literal["openai", "anthropic"], *, tls: bool = False) -> Iterator[Stack]:
    """A :class:`Stack` with its files under ``tmp``; with ``tls``, Suture serves HTTPS (a
    throwaway CA, its certificate in :attr:`Stack.ca_file`)."""
    record, captures = tmp / "emulator.jsonl", tmp / "captures"
    captures.mkdir()
    server_tls: dict[str, Any] = {}
    ca_file: Path | None = None
    verify: ssl.SSLContext | bool = True
    if tls:
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1", "localhost")
        ca_file, key_file, chain_file = tmp / "ca.pem", tmp / "key.pem", tmp / "chain.pem"
        ca.cert_pem.write_to_path(str(ca_file))
        cert.private_key_pem.write_to_path(str(key_file))
        cert.cert_chain_pems[0].write_to_path(str(chain_file))
        for pem in cert.cert_chain_pems[1:]:
            pem.write_to_path(str(chain_file), append=True)
        server_tls = {"ssl_certfile": str(chain_file), "ssl_keyfile": str(key_file)}
        verify = ssl.create_default_context(cafile=str(ca_file))
    emulator_app = build_emulator_app(EmulatorConfig(provider=provider, record_path=record))
    with (
        running_server(emulator_app, timeout_graceful_shutdown=1) as emulator,
        captured_logs() as logs,
    ):
        settings: dict[str, Any] = {
            "openai": {"upstream": emulator + "/v1"},
            "anthropic": {"upstream": emulator},
            "capture": {"dir": str(captures)},
            "ui": {"enabled": True},
        }
        with (
            running_server(build_app(Settings(**settings)), timeout_graceful_shutdown=2, **server_tls) as suture,
            recording_proxy(suture, verify=verify) as (front, recorder),
            sink() as (sink_url, refusing),
        ):
            yield Stack(emulator, suture, front, recorder, record, captures, logs, sink_url, refusing, ca_file)


def assert_untouched(stack: Stack, requests: int, *, may_reach: Collection[str] = ()) -> None:
    """Suture answered ``requests`` requests and repaired none: every access line says 0
    repairs, the capture directory is empty, the page lists nothing repaired or rejected, and
    the agent tried to reach nothing off loopback but ``may_reach`` (the sink's records)."""
    # The access line is written after the answer's last byte: the agent may have exited first.
    lines = wait_for(lambda: stack.access() if len(stack.access()) >= requests else None, timeout=10)
    assert lines, f"Suture answered {len(stack.access())} requests, not {requests}"
    assert [line["repairs"] for line in lines] == [0] * len(lines), lines
    assert sorted(p.name for p in stack.captures.iterdir()) == []
    for query in ("?repaired=1", "?rejected=1"):
        assert 'id="empty"' in stack.page(query), f"the page lists requests for {query}"
    assert set(stack.sink.attempts) <= set(may_reach), stack.sink.attempts


@dataclass
class Run:
    """A finished agent process."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return (
            f"$ {shlex.join(self.argv)}\nexit status {self.returncode}\n"
            f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"
        )


def _run(argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> Run:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return Run(argv, done.returncode, done.stdout, done.stderr)


def base_env(home: Path, sink_url: str) -> dict[str, str]:
    """A clean environment: the agent's own ``HOME`` and XDG directories, no key or base URL of
    the developer's, and every non-loopback request sent to the sink."""
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
    }
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)
    proxy = {name: sink_url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    loopback = "127.0.0.1,localhost,::1"
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        **{name: str(path) for name, path in dirs.items()},
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        **proxy,
        **{name.lower(): value for name, value in proxy.items()},
        "NO_PROXY": loopback,
        "no_proxy": loopback,
        # npm-based agents that look a package up ask the sink, not the registry.
        "npm_config_registry": sink_url + "/npm-registry/",
    }


# Claude Code ------------------------------------------------------------------------------------

CLAUDE_MODEL = "claude-opus-4-8"


def claude_run(binary: Path, stack: Stack, home: Path, work: Path, prompt: str, *args: str, base_url: str = "") -> Run:
    """``claude -p`` (print mode: one prompt, then exit), its answer as JSON."""
    env = {
        **base_env(home, stack.sink_url),
        "ANTHROPIC_BASE_URL": base_url or stack.front,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        # Claude Code's own switches for an offline machine (docs: "Environment variables").
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_BUG_COMMAND": "1",
    }
    # --allowedTools, not --dangerously-skip-permissions: Claude Code refuses the latter as root.
    argv = [str(binary), "-p", prompt, "--output-format", "json", "--model", CLAUDE_MODEL, "--allowedTools", "Bash"]
    return _run([*argv, *args], env, work)


def claude_session_file(home: Path) -> Path:
    """The one session transcript Claude Code wrote under ``home`` (``~/.claude/projects/<cwd>/<id>.jsonl``)."""
    (session,) = (home / ".claude" / "projects").glob("*/*.jsonl")
    return session


# Codex ------------------------------------------------------------------------------------------

CODEX_REASONING_MODEL = "gpt-5.5"
"""A reasoning model Codex 0.171 ships metadata for. The emulator answers it with a reasoning
item carrying ``encrypted_content`` (Codex asks for it), which Codex replays with ``store: false``."""
CODEX_MODEL = CODEX_REASONING_MODEL
"""The model of the clean sessions: a reasoning one, as Codex's users run, so its replayed
reasoning items are part of what must pass untouched."""


def codex_config(codex_home: Path, base_url: str, *, model: str = CODEX_MODEL, websockets: bool = False) -> None:
    """``$CODEX_HOME/config.toml``: a provider at ``base_url`` over the Responses API, keyed from
    an environment variable (so no login), with analytics, update checks, the plugin sync (GitHub
    and chatgpt.com) and retries off."""
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f"""model = "{model}"
model_provider = "suture"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false

[model_providers.suture]
name = "Suture"
base_url = "{base_url}"
env_key = "SUTURE_OPENAI_KEY"
wire_api = "responses"
supports_websockets = {"true" if websockets else "false"}
request_max_retries = 0
stream_max_retries = 0
"""
    )


def codex_run(binary: Path, stack: Stack, home: Path, work: Path, *args: str) -> Run:
    """``codex exec`` (one turn, then exit), events as JSON lines, with Codex's home at ``home/codex``."""
    env = {**base_env(home, stack.sink_url), "CODEX_HOME": str(home / "codex"), "SUTURE_OPENAI_KEY": OPENAI_KEY}
    if stack.ca_file is not None:
        env["SSL_CERT_FILE"] = str(stack.ca_file)
    # The emulator's workspace is throwaway: no sandbox, no approvals, no git repository.
    flags = ["--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox"]
    return _run([str(binary), "exec", *flags, *args], env, work)


def codex_rollout(home: Path) -> Path:
    """The one session rollout Codex wrote (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``)."""
    (rollout,) = (home / "codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    return rollout


# opencode ---------------------------------------------------------------------------------------

OPENCODE_MODEL = "gpt-4.1"


def opencode_config(home: Path, base_url: str) -> Path:
    """An ``opencode.json``: an OpenAI-compatible provider (Chat Completions) at ``base_url``,
    with autoupdate and sharing off and the tools allowed without asking."""
    config = home / "opencode.json"
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Suture",
        "options": {"baseURL": base_url, "apiKey": "{env:SUTURE_OPENAI_KEY}"},
        "models": {OPENCODE_MODEL: {"name": OPENCODE_MODEL, "tool_call": True}},
    }
    config.write_text(
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "model": f"suture/{OPENCODE_MODEL}",
                "autoupdate": False,
                "share": "disabled",
                "permission": {"bash": "allow", "edit": "allow"},
                "provider": {"suture": provider},
            },
            indent=2,
        )
    )
    return config


def opencode_run(binary: Path, stack: Stack, home: Path, work: Path, prompt: str) -> Run:
    """``opencode run`` with the prompt on stdin (as arguments, opencode re-quotes any word with
    a space in it), events as JSON lines."""
    env = {
        **base_env(home, stack.sink_url),
        "OPENCODE_CONFIG": str(home / "opencode.json"),
        "SUTURE_OPENAI_KEY": OPENAI_KEY,
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    }
    return _run([str(binary), "run", "--pure", "--format", "json"], env, work, stdin=prompt)


# aider ------------------------------------------------------------------------------------------

AIDER_MODEL = "openai/gpt-4.1"
# aider looks its models up in litellm's price list, fetched from GitHub once a day unless a fresh
# copy is in ~/.aider/caches: this one names the two models it uses.
_AIDER_MODEL_INFO = {
    name: {
        "max_input_tokens": 1_047_576,
        "max_output_tokens": 32_768,
        "input_cost_per_token": 2e-06,
        "output_cost_per_token": 8e-06,
        "litellm_provider": "openai",
        "mode": "chat",
        "supports_function_calling": True,
    }
    for name in ("gpt-4.1", "gpt-4.1-mini")
}


def aider_run(binary: Path, stack: Stack, home: Path, work: Path, message: str) -> Run:
    """``aider --message`` (one message, then exit), no git, no questions."""
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True, exist_ok=True)
    (caches / "model_prices_and_context_window.json").write_text(json.dumps(_AIDER_MODEL_INFO))
    env = {**base_env(home, stack.sink_url), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [
        str(binary),
        "--model",
        AIDER_MODEL,
        "--openai-api-base",
        stack.front + "/v1",
        "--openai-api-key",
        OPENAI_KEY,
        "--message",
        message,
        "--yes-always",
        "--no-git",
        "--no-check-update",
        "--analytics-disable",
        "--no-show-model-warnings",
        "--no-show-release-notes",
        "--no-pretty",
        "--no-fancy-input",
        "--no-detect-urls",
        "--map-tokens",
        "0",
    ]
    return _run(argv, env, work)
