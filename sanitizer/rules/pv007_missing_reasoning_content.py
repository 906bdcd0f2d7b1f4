from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ..validation._openai_chat import deepseek_thinks, moonshot_takes_empty_reasoning, moonshot_thinks
from ._base import Context, Rule


class MissingReasoningContent(Rule):
    """
    What it repairs:
        An assistant turn that called tools, replayed without its ``reasoning_content`` to a
        model that thinks: DeepSeek's reasoner, V4 models and thinking mode, Kimi K2.5 and later
        (which think by default) and Kimi's thinking models. Clients that speak plain OpenAI
        never store the field, or skip it when no reasoning came before the call.

    Why:
        DeepSeek: "Missing `reasoning_content` field in the assistant message at message index
        2. For more information, please refer to
        https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
        Moonshot: "thinking is enabled but reasoning_content is missing in assistant tool call
        message at index 2"

    Example:
        Before (model deepseek-reasoner): user "query the graph" / assistant calls query_graph
                (call_1), no reasoning_content / tool result for call_1
        After:  the same, the assistant turn with ``reasoning_content: ""``

    Safety:
        The reasoning the model wrote for that turn is gone (the client never kept it) and is not
        made up: the field is added empty, the stand-in the providers take (Continue's fix for
        DeepSeek, continuedev/continue#11290). Kimi K2.5 and later count an empty string as
        missing, so they get a single space (checked against api.moonshot.ai in
        theopenco/llmgateway PR#2093); kimi-k2-thinking takes the empty string. Reasoning that
        is there is never touched, and only tool-calling turns get the field.
    """

    code = "PV007"
    name = "missing-reasoning-content"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"deepseek", "moonshot"})
    fixes: ClassVar[tuple[str, ...]] = ("deepseek.D3", "moonshot.X4")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        body = transcript.body
        if ctx.provider == "deepseek":
            if not deepseek_thinks(body):
                return
            stand_in = ""
        else:
            if not moonshot_thinks(body):
                return
            stand_in = "" if moonshot_takes_empty_reasoning(body) else " "
        for entry in transcript.entries:
            if entry.role != "assistant" or not entry.calls():
                continue
            reasoning = entry.source.get("reasoning_content")
            if isinstance(reasoning, str) and (reasoning or not stand_in):
                continue
            entry.source = {**entry.source, "reasoning_content": stand_in}
            what = "an empty" if stand_in == "" else "a one-space"
            had = "an empty one, which this model counts as missing" if isinstance(reasoning, str) else "none"
            ctx.report(
                self,
                "filled",
                entry,
                None,
                f"gave a tool-calling assistant turn {what} reasoning_content "
                f"(it had {had}; the model's reasoning for it was not kept by the client)",
            )
