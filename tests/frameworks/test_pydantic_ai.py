"""pydantic-ai: a run stopped after the model asked for a tool and before the tool ran.

The interrupted run is real: ``Agent.iter`` walks the run node by node and the caller stops
at the ``CallToolsNode`` (the model's tool call is in the history, the tool has not run: the
user pressed stop) and keeps ``all_messages()`` as the conversation.

The broken request itself cannot be produced: pydantic-ai 2.68 refuses a new prompt after a
response with unprocessed tool calls (``UserError``, pointing at ``repair_messages()``), and
when the app appends the user's correction to its own chat log (pydantic-ai's
``ModelRequest``/``UserPromptPart``) and runs on that, pydantic-ai synthesizes the missing
``ToolReturnPart`` itself before every model request. So this test proves the other half of
Suture's promise with a framework that already heals itself: its next request passes
through Suture untouched (the provider receives the very same body as without Suture) and is
answered. The models are pointed at Suture with their provider's ``base_url``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

from tests._support.framework_stack import Stack

CORRECTION = "Stop. Do it differently: just answer 42."


OPEN_MODELS: list[Any] = []


def model(api: str, base_url: str) -> Model:
    built: AnthropicModel | OpenAIChatModel
    if api == "anthropic":
        built = AnthropicModel("claude-emulated", provider=AnthropicProvider(base_url=base_url, api_key="sk-ant-test"))
    else:
        built = OpenAIChatModel("gpt-emulated", provider=OpenAIProvider(base_url=base_url + "/v1", api_key="sk-test"))
    OPEN_MODELS.append(built)
    return built


def agent(api: str, base_url: str) -> Agent[None, str]:
    ran: list[str] = []
    built: Agent[None, str] = Agent(model(api, base_url), instructions="Use tools when asked.", retries=0)

    @built.tool_plain
    def slow_tool() -> str:
        """A tool that takes a long time."""
        ran.append("slow_tool")
        return "done"

    return built


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_run_stopped_before_the_tool_ran_passes_through_untouched(stack: Stack, api: str) -> None:
    async def scenario() -> tuple[list[Any], dict[str, Any], str]:
        try:
            return await calls()
        finally:
            # The SDK clients' pooled sockets must be closed in the loop that opened them.
            while OPEN_MODELS:
                await OPEN_MODELS.pop().client.close()

    async def calls() -> tuple[list[Any], dict[str, Any], str]:
        through_suture = agent(api, stack.suture)
        async with through_suture.iter("Please run the slow tool. CALL_TOOL slow_tool") as run:
            async for node in run:
                if Agent.is_call_tools_node(node):
                    break  # stopped: the model asked, the tool never ran
            interrupted = run.all_messages()
        history: list[ModelMessage] = [*interrupted, ModelRequest(parts=[UserPromptPart(CORRECTION)])]

        direct = await agent(api, stack.provider).run(message_history=history)
        direct_body = stack.last_body()
        result = await through_suture.run(message_history=history)
        assert result.output == direct.output
        return interrupted, direct_body, result.output

    history, direct_body, output = asyncio.run(scenario())

    last = history[-1]
    assert isinstance(last, ModelResponse)
    [call] = [p for p in last.parts if isinstance(p, ToolCallPart)]
    assert CORRECTION in output
    assert stack.answered(call.tool_call_id)  # pydantic-ai's own synthesized result
    assert stack.last_body() == direct_body  # Suture had nothing to repair and changed nothing
