"""LangGraph with langchain-openai and langchain-anthropic chat models: an interrupted graph.

Driven for real: a StateGraph (model node, tools node) compiled with a checkpointer and
``interrupt_before=["tools"]``, the way a human-in-the-loop graph pauses before running a tool.
The model asks for slow_tool, the graph stops before the tools node; the user, instead of
resuming, sends a correction on the same thread. LangGraph appends it to the checkpointed
messages and runs the model node again, with an ``AIMessage`` whose tool call no
``ToolMessage`` answers.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain_openai")
pytest.importorskip("langchain_anthropic")

import anthropic
import openai
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode

from tests._support.framework_stack import Stack

CORRECTION = "Stop. Do it differently: just answer 42."


@tool
def slow_tool() -> str:
    """A tool that takes a long time."""
    return "done"


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat_model(api: str, base_url: str) -> BaseChatModel:
    # The one line that changes for Suture: base_url.
    if api == "anthropic":
        return ChatAnthropic(model_name="claude-emulated", base_url=base_url, api_key="sk-ant-test", max_retries=0)
    return ChatOpenAI(model="gpt-emulated", base_url=base_url + "/v1", api_key="sk-test", max_retries=0)


def graph(llm: BaseChatModel) -> Any:
    bound = llm.bind_tools([slow_tool])

    def call_model(state: State) -> dict[str, list[AnyMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    def route(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([slow_tool]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=InMemorySaver(), interrupt_before=["tools"])


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_graph_interrupted_before_tools_then_corrected(stack: Stack, api: str) -> None:
    config = {"configurable": {"thread_id": "t1"}}
    app = graph(chat_model(api, stack.suture))
    paused = app.invoke({"messages": [HumanMessage("Please run the slow tool. CALL_TOOL slow_tool")]}, config)
    assert app.get_state(config).next == ("tools",)
    call = paused["messages"][-1]
    assert isinstance(call, AIMessage) and call.tool_calls[0]["name"] == "slow_tool"
    history = app.get_state(config).values["messages"]

    # Straight to the provider, the same history is refused.
    direct = graph(chat_model(api, stack.provider))
    direct.update_state(config, {"messages": history}, as_node="model")
    with pytest.raises((openai.BadRequestError, anthropic.BadRequestError)) as refused:
        direct.invoke({"messages": [HumanMessage(CORRECTION)]}, config)
    assert refused.value.status_code == 400
    assert call.tool_calls[0]["id"] in str(refused.value)

    # Through Suture the correction is answered and the graph goes on.
    done = app.invoke({"messages": [HumanMessage(CORRECTION)]}, config)
    assert not any(isinstance(m, ToolMessage) for m in done["messages"]), "the graph never ran the tool"
    assert CORRECTION in str(done["messages"][-1].content)
    assert stack.answered(call.tool_calls[0]["id"])
