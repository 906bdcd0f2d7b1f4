"""aider 0.86.2 (``aider --message``) -> Suture -> the emulator.

aider calls no tools: it edits files from the text of the reply. Through litellm it speaks
Chat Completions (``POST /v1/chat/completions``, streamed, ``temperature: 0``) and ends each
request with a ``role: "system"`` reminder of its edit format, after the user's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support.agent_stack import agent_stack, aider_run, assert_untouched

pytestmark = [pytest.mark.agents, pytest.mark.slow]


def test_text_round_trip(aider: Path, tmp_path: Path, home: Path, work: Path) -> None:
    with agent_stack(tmp_path, "openai") as stack:
        run = aider_run(aider, stack, home, work, "Say hello to Suture")
        assert run.returncode == 0, run
        assert 'Emulated reply. Last user text: "Say hello to Suture"' in run.stdout, run

        (sent,) = stack.recorder.exchanges
        assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
        assert sent.response_headers["x-suture-repairs"] == "0"
        (received,) = stack.requests()
        assert received["status"] == 200 and received["raw_sha256"] == sent.sha256
        body = sent.json()
        assert (body["model"], body["stream"], body["temperature"]) == ("gpt-4.1", True, 0)
        # aider 0.86's wire format: the user's message, then its system reminder last.
        user, reminder = body["messages"][-2:]
        assert user == {"role": "user", "content": "Say hello to Suture"}
        assert reminder["role"] == "system" and "SEARCH/REPLACE" in reminder["content"]
        assert_untouched(stack, requests=1)
