"""Claude Code 2.1.197 (``claude -p``) -> Suture -> the emulator, on Claude Opus 4.8.

Claude Code speaks Anthropic Messages, streamed (``POST /v1/messages``, ``stream: true``). Since 2.1.x it puts a ``role: "system"`` message inside
``messages`` (right after the user's turn) and declares it with the
``mid-conversation-system-2026-04-07`` beta; Claude Opus 4.8 takes such a message, so Suture's
capability table leaves it where it is and the bytes reach the provider unchanged.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests._support.agent_stack import (
    CLAUDE_MODEL,
    Stack,
    agent_stack,
    assert_untouched,
    claude_run,
    claude_session_file,
)
from tests._support.proxy_e2e import wait_for

pytestmark = [pytest.mark.agents, pytest.mark.slow]

TOOL_CALL = 'CALL_TOOL Bash {"command": "echo suture-ok > out.txt"}'
MID_CONVERSATION_BETA = "mid-conversation-system-2026-04-07"


def posts(stack: Stack) -> list[Any]:
    return [e for e in stack.recorder.exchanges if e.method == "POST"]


def run_tool_loop(claude: Path, stack: Stack, home: Path, work: Path) -> dict[str, Any]:
    run = claude_run(claude, stack, home, work, TOOL_CALL)
    assert run.returncode == 0, run
    result: dict[str, Any] = json.loads(run.stdout)
    assert result["is_error"] is False, run
    assert (work / "out.txt").read_text() == "suture-ok\n", "the Bash tool did not run"
    return result


def test_tool_loop_reaches_the_provider_byte_for_byte(claude: Path, tmp_path: Path, home: Path, work: Path) -> None:
    with agent_stack(tmp_path, "anthropic") as stack:
        result = run_tool_loop(claude, stack, home, work)
        assert result["num_turns"] == 2
        assert result["result"].startswith("Emulated reply")

        # The endpoint Claude Code used, once per turn of the tool loop. (Without a proxy in its
        # environment it first sends a HEAD / preconnect too, which Suture answers 404.)
        assert [(e.method, e.path) for e in stack.recorder.exchanges] == [("POST", "/v1/messages")] * 2
        assert [e.response_headers["x-suture-repairs"] for e in stack.recorder.exchanges] == ["0", "0"]
        received = stack.requests()
        assert [r["status"] for r in received] == [200, 200]
        # What Claude Code sent is what the provider received, byte for byte.
        assert [r["raw_sha256"] for r in received] == [e.sha256 for e in posts(stack)]

        first, second = (e.json() for e in posts(stack))
        assert first["model"] == CLAUDE_MODEL and first["stream"] is True
        # Claude Code 2.1.197's wire format: its own system message inside messages, declared by a beta.
        assert [m["role"] for m in first["messages"]] == ["user", "system"]
        assert first["messages"][1]["content"].startswith("Available agent types")
        for sent, got in zip(posts(stack), received, strict=True):
            assert MID_CONVERSATION_BETA in sent.headers["anthropic-beta"].split(",")
            assert got["headers"]["anthropic-beta"] == sent.headers["anthropic-beta"]
        # The scripted call, with its arguments, ran and came back as the next turn's result.
        call = second["messages"][-2]["content"][-1]
        answer = second["messages"][-1]["content"][0]
        assert call["type"] == "tool_use" and call["name"] == "Bash"
        assert call["input"] == {"command": "echo suture-ok > out.txt"}
        assert answer["type"] == "tool_result" and answer["tool_use_id"] == call["id"]

        assert_untouched(stack, requests=2)


def _session_entries(session: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.read_text().splitlines()]


def _is_tool_result(entry: dict[str, Any]) -> bool:
    content = entry.get("message", {}).get("content") if entry.get("type") == "user" else None
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)


def test_resumed_after_the_tool_result_was_lost(claude: Path, tmp_path: Path, home: Path, work: Path) -> None:
    """The process died after the model's tool call and before its result was written; the
    user resumes the session. Claude Code 2.1.197 drops the unanswered call from what it sends
    itself, so Suture has nothing to repair."""
    with agent_stack(tmp_path, "anthropic") as stack:
        result = run_tool_loop(claude, stack, home, work)
        session = claude_session_file(home)
        entries = _session_entries(session)
        (lost,) = [e for e in entries if _is_tool_result(e)]
        kept = [e for e in entries if e is not lost]
        # The interrupted session ends at the call: nothing after it was ever written.
        call_uuid = lost["parentUuid"]
        kept = kept[: next(i for i, e in enumerate(kept) if e.get("uuid") == call_uuid) + 1]
        session.write_text("".join(json.dumps(e) + "\n" for e in kept))

        run = claude_run(claude, stack, home, work, "Never mind, just say hi", "--resume", result["session_id"])
        assert run.returncode == 0, run
        resumed = posts(stack)[-1]
        assert resumed.response_headers["x-suture-repairs"] == "0"
        body = resumed.json()
        assert body["messages"][-1]["content"][0]["text"] == "Never mind, just say hi"
        assert not any(
            isinstance(m["content"], list) and any(b.get("type") == "tool_use" for b in m["content"])
            for m in body["messages"]
        ), "Claude Code kept the unanswered tool_use"
        assert stack.requests()[-1]["raw_sha256"] == resumed.sha256
        assert_untouched(stack, requests=len(stack.recorder.exchanges))


def test_broken_session_is_repaired(claude: Path, tmp_path: Path, home: Path, work: Path) -> None:
    """A session whose tool ids came from another provider (Kimi's ``functions.Bash:0``, as after
    a gateway served a Kimi model): resumed straight against the provider, Claude Code gets the
    400; through Suture (AN004 invalid-tool-id), it goes on."""
    with agent_stack(tmp_path, "anthropic") as stack:
        result = run_tool_loop(claude, stack, home, work)
        session = claude_session_file(home)
        text = session.read_text()
        (tool_id,) = set(re.findall(r"toolu_[A-Za-z0-9]+", text))
        session.write_text(text.replace(tool_id, "functions.Bash:0"))
        direct_home = tmp_path / "direct-home"
        shutil.copytree(home, direct_home)
        resume = ("Never mind, just say hi", "--resume", result["session_id"])

        direct = claude_run(claude, stack, direct_home, work, *resume, base_url=stack.emulator)
        assert direct.returncode != 0, direct
        refused = stack.requests()[-1]
        assert refused["status"] == 400
        assert "functions.Bash:0" in json.dumps(refused["body"]["messages"])

        run = claude_run(claude, stack, home, work, *resume)
        assert run.returncode == 0, run
        assert json.loads(run.stdout)["is_error"] is False
        resumed = posts(stack)[-1]
        assert int(resumed.response_headers["x-suture-repairs"]) >= 1
        forwarded = stack.requests()[-1]
        assert forwarded["status"] == 200
        ids = re.findall(r'"(?:id|tool_use_id)": "([^"]+)"', json.dumps(forwarded["body"]["messages"]))
        assert ids and all(re.fullmatch(r"[a-zA-Z0-9_-]+", i) for i in ids), ids
        # The system message Claude Code sent stays where it was, repaired or not.
        assert forwarded["body"]["messages"][1]["role"] == "system"
        captures = wait_for(lambda: sorted(stack.captures.iterdir()))
        (capture,) = captures
        assert "AN004" in {repair["code"] for repair in json.loads(capture.read_text())["repairs"]}
