"""AgentScope (Python): a ReAct agent dies after the model asked for a tool and before the tool ran.

The seed reports are AgentScope Java's: an interrupt before acting leaves the ``ToolUseBlock``
without a result, and every later call answers 400. AgentScope Python 2.0 closes pending calls
when a reply is *cancelled* (``_close_unfinished_tool_calls``), so that path is sound here. What
still leaves the same transcript is the state a session store saved while the tool call was
in flight, restored after the process died before the tool ran (a crash, an OOM kill, a
redeploy): the agent restarts from it, the user sends a correction, and the model call carries
a ``tool_use`` no result answers. That is driven for real below: the agent's own reply loop,
model classes, formatter and ``AgentState`` serialisation; only the moment of death is simulated
(an acting middleware that snapshots the state and never returns).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

pytest.importorskip("agentscope")

from agentscope.agent import Agent, InjectionConfig
from agentscope.credential import AnthropicCredential, OpenAICredential
from agentscope.message import Msg, ToolCallBlock, UserMsg
from agentscope.middleware import MiddlewareBase
from agentscope.model import AnthropicChatModel, ChatModelBase, OpenAIChatModel
from agentscope.permission import PermissionBehavior, PermissionDecision
from agentscope.state import AgentState
from agentscope.tool import FunctionTool, Toolkit

from tests._support.framework_stack import Stack

TASK = "请调用 slow_tool 完成任务 CALL_TOOL slow_tool"
CORRECTION = "停！换个做法：直接回答 42"


async def slow_tool() -> str:
    """A tool that takes a long time."""
    await asyncio.sleep(3600)
    return "done"


class DiesBeforeActing(MiddlewareBase):
    """Saves the agent's state as a session store would, then hangs where the process died."""

    def __init__(self) -> None:
        self.saved: list[str] = []

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any) -> Any:
        self.saved.append(agent.state.model_dump_json())
        await asyncio.Event().wait()
        yield  # pragma: no cover - an async generator, as the hook must be


OPEN_MODELS: list[Any] = []


def model(api: str, base_url: str) -> ChatModelBase:
    built: ChatModelBase
    if api == "anthropic":
        built = AnthropicChatModel(
            credential=AnthropicCredential(api_key="sk-ant-test", base_url=base_url),
            model="claude-emulated",
            max_retries=0,
        )
    else:
        built = OpenAIChatModel(
            credential=OpenAICredential(api_key="sk-test", base_url=base_url + "/v1"),
            model="gpt-emulated",
            max_retries=0,
        )
    OPEN_MODELS.append(built)
    return built


async def close_models() -> None:
    # The SDK clients' pooled sockets must be closed in the loop that opened them.
    while OPEN_MODELS:
        await OPEN_MODELS.pop().client.close()


async def agent(api: str, base_url: str, state: AgentState | None, middlewares: list[MiddlewareBase]) -> Agent:
    toolkit = Toolkit()
    allow = PermissionDecision(behavior=PermissionBehavior.ALLOW, message="allowed in tests")
    await toolkit.add_tool(FunctionTool(slow_tool, permission=allow))
    return Agent(
        name="assistant",
        system_prompt="你是测试 agent，按用户要求调用工具。",
        model=model(api, base_url),
        toolkit=toolkit,
        state=state,
        middlewares=middlewares,
        # The runtime-state reminder would become the last user text the emulator reads.
        injection_config=InjectionConfig(inject_runtime_state=False),
    )


async def saved_mid_tool_call(api: str, base_url: str) -> str:
    """Run the agent until it is about to execute slow_tool; return the state saved then."""
    dies = DiesBeforeActing()
    first = await agent(api, base_url, None, [dies])
    run = asyncio.create_task(first.reply(UserMsg(name="user", content=TASK)))
    async with asyncio.timeout(20):
        while not dies.saved:
            await asyncio.sleep(0.01)
    # The dead process's task. AgentScope answers the cancel by closing the call in *this*
    # agent's memory, which the saved state never sees.
    run.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await run
    return dies.saved[0]


def orphan_calls(state: AgentState) -> list[str]:
    calls, results = [], set()
    for msg in state.context:
        for block in msg.content:
            if isinstance(block, ToolCallBlock):
                calls.append(block.id)
            elif getattr(block, "type", None) == "tool_result":
                results.add(block.id)
    return [c for c in calls if c not in results]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_restarted_agent_with_unanswered_tool_call_recovers_through_suture(stack: Stack, api: str) -> None:
    saved_state: list[str] = []

    async def scenario() -> tuple[Msg, Exception | None]:
        try:
            return await calls()
        finally:
            await close_models()

    async def calls() -> tuple[Msg, Exception | None]:
        saved = await saved_mid_tool_call(api, stack.suture)
        saved_state.append(saved)
        assert orphan_calls(AgentState.model_validate_json(saved)), "the saved state must hold the unanswered call"

        direct = await agent(api, stack.provider, AgentState.model_validate_json(saved), [])
        refused: Exception | None = None
        try:
            await direct.reply(UserMsg(name="user", content=CORRECTION))
        except Exception as exc:  # the SDK's BadRequestError, re-raised by the agent
            refused = exc

        restarted = await agent(api, stack.suture, AgentState.model_validate_json(saved), [])
        return await restarted.reply(UserMsg(name="user", content=CORRECTION)), refused

    reply, refused = asyncio.run(scenario())

    assert refused is not None and getattr(refused, "status_code", None) == 400
    assert "tool_use" in str(refused) or "tool_call" in str(refused)
    assert CORRECTION in reply.get_text_content()
    # The provider got the transcript with the call answered, and the correction after it.
    saved_call = orphan_calls(AgentState.model_validate_json(saved_state[0]))[0]
    assert stack.answered(saved_call)
    assert CORRECTION in str(stack.last_body()["messages"])
