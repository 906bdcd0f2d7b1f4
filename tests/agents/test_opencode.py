"""opencode 1.18.33 (``opencode run``) -> Suture -> the emulator.

Configured with an OpenAI-compatible provider (``@ai-sdk/openai-compatible``, bundled with
opencode), opencode speaks Chat Completions, streamed with ``stream_options.include_usage``
(``POST /v1/chat/completions``): a title request (no tools) beside the agent's own turns, whose
shell tool is ``bash`` (``command`` and ``description``). Its one request off loopback is the
npm registry's entry for ``@opencode-ai/plugin``, which it installs into its config directory
at every start (no setting turns that off); it goes on without it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests._support.agent_stack import OPENCODE_MODEL, agent_stack, assert_untouched, opencode_config, opencode_run

pytestmark = [pytest.mark.agents, pytest.mark.slow]

TOOL_CALL = 'CALL_TOOL bash {"command": "echo suture-ok > out.txt", "description": "Write out.txt"}'


def test_tool_loop(opencode: Path, tmp_path: Path, home: Path, work: Path) -> None:
    with agent_stack(tmp_path, "openai") as stack:
        opencode_config(home, stack.front + "/v1")
        run = opencode_run(opencode, stack, home, work, TOOL_CALL)
        assert run.returncode == 0, run
        assert (work / "out.txt").read_text() == "suture-ok\n", "the bash tool did not run"
        events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        ran = [e["part"] for e in events if e.get("type") == "tool_use"]
        assert [(p["tool"], p["state"]["status"]) for p in ran] == [("bash", "completed")], run

        sent = stack.recorder.exchanges
        assert {(e.method, e.path) for e in sent} == {("POST", "/v1/chat/completions")}
        assert [e.response_headers["x-suture-repairs"] for e in sent] == ["0"] * len(sent)
        received = stack.requests()
        assert [r["status"] for r in received] == [200] * len(sent)
        # The title request runs beside the agent's turns: compare the bytes in any order.
        assert Counter(r["raw_sha256"] for r in received) == Counter(e.sha256 for e in sent)

        bodies = [e.json() for e in sent]
        turns = [b for b in bodies if b.get("tools")]
        (title,) = [b for b in bodies if not b.get("tools")]
        assert title["messages"][0]["content"].startswith("You are a title generator")
        assert len(turns) == 2
        for body in bodies:
            assert body["model"] == OPENCODE_MODEL and body["stream"] is True
            assert body["stream_options"] == {"include_usage": True}
        assert "bash" in {t["function"]["name"] for t in turns[0]["tools"]}
        asked, answered = turns[1]["messages"][-2:]
        (call,) = asked["tool_calls"]
        assert call["function"]["name"] == "bash"
        assert json.loads(call["function"]["arguments"]) == {
            "command": "echo suture-ok > out.txt",
            "description": "Write out.txt",
        }
        assert answered["role"] == "tool" and answered["tool_call_id"] == call["id"]
        # opencode installs @opencode-ai/plugin into its config directory in the background,
        # whatever the flags; offline the lookup fails, logged, and nothing else is tried.
        assert_untouched(stack, requests=len(sent), may_reach={"GET /npm-registry/@opencode-ai%2fplugin"})
