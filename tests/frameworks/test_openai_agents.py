"""OpenAI Agents SDK: a run interrupted for tool approval, then answered with a new message.

Driven for real: a function tool with ``needs_approval=True`` makes ``Runner.run`` stop with an
interruption after the model asked for it and before it ran. An app that takes the user's
next message instead of an approval (the user typed a correction rather than pressing
"approve") continues from ``result.to_input_list()`` plus that message, so the Responses API
gets a ``function_call`` with no ``function_call_output``. The SDK is pointed at Suture the usual
way, ``OPENAI_BASE_URL``, read by the default ``OpenAIProvider``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("agents")

import openai
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.models import openai_provider
from agents.models.openai_provider import OpenAIProvider

from tests._support.framework_stack import Stack

CORRECTION = "Stop. Do it differently: just answer 42."


@function_tool(needs_approval=True)
def slow_tool() -> str:
    """A tool that takes a long time."""
    return "done"


@pytest.mark.parametrize("api", ["responses", "chat_completions"])
def test_run_interrupted_for_approval_then_corrected(stack: Stack, monkeypatch: pytest.MonkeyPatch, api: str) -> None:
    set_tracing_disabled(True)
    # The SDK shares one HTTP client per process; each test's event loop gets its own.
    monkeypatch.setattr(openai_provider, "_http_client", None)
    agent = Agent(name="assistant", instructions="Use tools when asked.", model="gpt-emulated", tools=[slow_tool])

    async def run(base_url: str, inputs: Any) -> Any:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url + "/v1")
        # The default provider builds its client from OPENAI_API_KEY and OPENAI_BASE_URL.
        provider = OpenAIProvider(use_responses=api == "responses")
        return await Runner.run(agent, inputs, run_config=RunConfig(model_provider=provider))

    async def scenario() -> tuple[Any, Any, Any]:
        try:
            first = await run(stack.suture, "Please run the slow tool. CALL_TOOL slow_tool")
            history = [*first.to_input_list(), {"role": "user", "content": CORRECTION}]
            try:
                await run(stack.provider, history)
            except openai.BadRequestError as exc:
                refused = exc
            else:
                refused = None
            return first, refused, await run(stack.suture, history)
        finally:
            if openai_provider._http_client is not None:
                await openai_provider._http_client.aclose()

    first, refused, second = asyncio.run(scenario())

    [approval] = first.interruptions
    call_id = approval.raw_item.call_id
    assert refused is not None and refused.status_code == 400 and call_id in str(refused)
    assert CORRECTION in second.final_output
    assert stack.answered(call_id)
    assert (
        stack.requests()[-1]["path"] == {"responses": "/v1/responses", "chat_completions": "/v1/chat/completions"}[api]
    )
