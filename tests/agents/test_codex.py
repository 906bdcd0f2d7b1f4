"""Codex CLI 0.171.0 (``codex exec``) -> Suture -> the emulator.

Codex speaks OpenAI Responses, streamed (``POST /v1/responses``, ``stream: true``), with
``store: false`` and ``include: ["reasoning.encrypted_content"]``: it keeps the conversation
itself and replays it whole each turn. Its shell tool in 0.171 is ``exec_command`` with a
``cmd`` string (earlier releases: ``shell`` with a ``command`` argv list).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests._support.agent_stack import (
    CODEX_MODEL,
    CODEX_REASONING_MODEL,
    Stack,
    agent_stack,
    assert_untouched,
    codex_config,
    codex_rollout,
    codex_run,
)
from tests._support.proxy_e2e import wait_for

pytestmark = [pytest.mark.agents, pytest.mark.slow]

TOOL_CALL = 'CALL_TOOL exec_command {"cmd": "echo suture-ok > out.txt"}'
ROUTES = Path(__file__).parents[2] / "proxy" / "routes"


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_tool_loop(codex: Path, stack: Stack, home: Path, work: Path) -> None:
    run = codex_run(codex, stack, home, work, TOOL_CALL)
    assert run.returncode == 0, run
    assert (work / "out.txt").read_text() == "suture-ok\n", "the exec_command tool did not run"
    ran = [e["item"] for e in events(run.stdout) if e.get("item", {}).get("type") == "command_execution"]
    assert ran and ran[-1]["exit_code"] == 0, run


def test_tool_loop_over_https(codex: Path, tmp_path: Path, home: Path, work: Path) -> None:
    with agent_stack(tmp_path, "openai", tls=True) as stack:
        assert stack.suture.startswith("https://")
        codex_config(home / "codex", stack.suture + "/v1")
        run_tool_loop(codex, stack, home, work)

        received = stack.requests()
        assert [(r["path"], r["status"]) for r in received] == [("/v1/responses", 200)] * 2
        assert received[0]["headers"]["user-agent"].startswith("codex_exec/0.171.0")
        first, second = (r["body"] for r in received)
        # Codex 0.171's wire format: stateless Responses, streamed, its shell tool exec_command.
        assert first["model"] == CODEX_MODEL
        assert (first["stream"], first["store"], first["include"]) == (True, False, ["reasoning.encrypted_content"])
        tools = {t.get("name") for t in first["tools"]}
        assert "exec_command" in tools and "shell" not in tools
        call, output = second["input"][-2:]
        assert call["type"] == "function_call" and call["name"] == "exec_command"
        assert json.loads(call["arguments"]) == {"cmd": "echo suture-ok > out.txt"}
        assert output["type"] == "function_call_output" and output["call_id"] == call["call_id"]
        assert_untouched(stack, requests=2)


def test_resumed_session_is_repaired(codex: Path, tmp_path: Path, home: Path, work: Path) -> None:
    """An interrupted session, resumed with ``codex exec resume --last``. Codex answers the call
    that lost its output itself ("aborted"), but replays its reasoning items by id with
    ``store: false``; when the provider (or a gateway) sent them without encrypted content, as
    the emulator does, OpenAI answers 404 "Item with id 'rs_...' not found" (seen with opencode,
    oh-my-pi and others). Straight to the provider Codex fails; through Suture (RS004) it goes on."""
    with agent_stack(tmp_path, "openai") as stack:
        codex_config(home / "codex", stack.front + "/v1", model=CODEX_REASONING_MODEL)
        run_tool_loop(codex, stack, home, work)
        rollout = codex_rollout(home)
        items = [json.loads(line) for line in rollout.read_text().splitlines()]
        kept = []
        for item in items:
            payload = item.get("payload", {})
            if payload.get("type") == "function_call_output":
                continue  # the process died before the tool's output was recorded
            if payload.get("type") == "reasoning":
                payload["encrypted_content"] = None
            kept.append(item)
        rollout.write_text("".join(json.dumps(item) + "\n" for item in kept))
        direct_home = tmp_path / "direct-home"
        shutil.copytree(home, direct_home)
        codex_config(direct_home / "codex", stack.emulator + "/v1", model=CODEX_REASONING_MODEL)
        resume = ("resume", "--last", "Never mind, say hi")

        direct = codex_run(codex, stack, direct_home, work, *resume)
        assert direct.returncode != 0, direct
        refused = stack.requests()[-1]
        assert refused["status"] == 404
        assert any(i.get("type") == "reasoning" for i in refused["body"]["input"])

        run = codex_run(codex, stack, home, work, *resume)
        assert run.returncode == 0, run
        resumed = stack.recorder.exchanges[-1]
        assert resumed.path == "/v1/responses" and int(resumed.response_headers["x-suture-repairs"]) >= 1
        sent = resumed.json()["input"]
        forwarded = stack.requests()[-1]
        assert forwarded["status"] == 200
        assert not any(i.get("type") == "reasoning" for i in forwarded["body"]["input"])
        # Codex's own repair of the lost output, passed on as it was.
        (call,) = [i for i in sent if i.get("type") == "function_call"]
        assert {"type": "function_call_output", "call_id": call["call_id"], "output": "aborted"}.items() <= next(
            i for i in sent if i.get("type") == "function_call_output"
        ).items()
        request_id = resumed.response_headers["x-suture-request-id"]
        capture = wait_for(lambda: next(stack.captures.glob(f"*{request_id}*.json"), None))
        assert capture is not None, sorted(stack.captures.iterdir())
        assert "RS004" in {repair["code"] for repair in json.loads(capture.read_text())["repairs"]}


@pytest.mark.skipif(not list(ROUTES.glob("*socket*.py")), reason="WebSocket route pending")
def test_tool_loop_over_websocket(codex: Path, tmp_path: Path, home: Path, work: Path) -> None:
    """Codex's default transport with OpenAI: the Responses API over a WebSocket (``GET
    /v1/responses``, Upgrade), one ``response.create`` event per request, and no fallback to POST."""
    with agent_stack(tmp_path, "openai") as stack:
        codex_config(home / "codex", stack.suture + "/v1", websockets=True)
        run_tool_loop(codex, stack, home, work)

        received = stack.requests()
        assert received and all(r["headers"].get("upgrade") == "websocket" for r in received), received
        assert {(r["body"]["type"], r["status"]) for r in received} == {("response.create", 200)}
        # The tool's output goes out alone, chained to the response that made the call.
        last = received[-1]["body"]
        assert last["previous_response_id"] and [i["type"] for i in last["input"]] == ["function_call_output"]
        lines = wait_for(lambda: stack.access() if len(stack.access()) > len(received) else None, timeout=10)
        assert {(line["method"], line["status"]) for line in lines} == {("WEBSOCKET", 200), ("GET", 101)}
        assert_untouched(stack, requests=len(received) + 1)
