from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Part, Transcript
from ..dialects.anthropic_messages import THINKING_BLOCKS
from ..validation._openai_chat import deepseek_thinks, moonshot_takes_empty_reasoning, moonshot_thinks
from ._base import Context, Rule

# What a lost thinking block is replaced with on DeepSeek's Anthropic endpoint: empty, like the
# Chat endpoint's empty reasoning_content, with the signature field an Anthropic client keeps.
_STAND_IN_THINKING = {"type": "thinking", "thinking": "", "signature": ""}


class MissingReasoningContent(Rule):
    """
    What it repairs:
        An assistant turn that called tools, replayed without its ``reasoning_content`` to a
        model that thinks: DeepSeek's reasoner, V4 models and thinking mode, Kimi K2.5 and later
        (which think by default) and Kimi's thinking models. Clients that speak plain OpenAI
        never store the field, or skip it when no reasoning came before the call. The same turn
        sent in Anthropic's format to DeepSeek's Anthropic-compatible endpoint without its
        thinking block: Claude Code and other Anthropic clients drop thinking they did not get
        from Claude, or that the model skipped for that turn.

    Why:
        DeepSeek: "Missing `reasoning_content` field in the assistant message at message index
        2. For more information, please refer to
        https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
        Moonshot: "thinking is enabled but reasoning_content is missing in assistant tool call
        message at index 2"
        DeepSeek's Anthropic endpoint: "The `content[].thinking` in the thinking mode must be
        passed back to the API."

    Example:
        Before (model deepseek-reasoner): user "query the graph" / assistant calls query_graph
                (call_1), no reasoning_content / tool result for call_1
        After:  the same, the assistant turn with ``reasoning_content: ""``
        Anthropic format, to DeepSeek: assistant [tool_use Bash] becomes assistant
                [thinking "" (signature ""), tool_use Bash]

    Safety:
        The reasoning the model wrote for that turn is gone (the client never kept it) and is not
        made up: the field is added empty, the stand-in the providers take (Continue's fix for
        DeepSeek, continuedev/continue#11290). Kimi K2.5 and later count an empty string as
        missing, so they get a single space (checked against api.moonshot.ai in
        theopenco/llmgateway PR#2093); kimi-k2-thinking takes the empty string. On DeepSeek's
        Anthropic endpoint the stand-in is an empty thinking block put first in the message,
        the fallback leookun/cursor-byok PR#276 sends when no thinking was kept (after which it
        saw no more of these 400s); that endpoint asks it of tool-calling turns only
        (SuperJJ007/CSSwitch PR#72). Reasoning that is there is never touched, and only
        tool-calling turns get the field or the block.
    """

    code = "PV007"
    name = "missing-reasoning-content"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"deepseek", "moonshot"})
    also_for = frozenset({("anthropic-messages", "deepseek")})
    fixes: ClassVar[tuple[str, ...]] = ("deepseek.D3", "moonshot.X4")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        messages = body["messages"]
        if ctx.api == "anthropic-messages":
            return not deepseek_thinks(body) or all(
                any(type(block) is dict and block.get("type") in THINKING_BLOCKS for block in m["content"])
                for m in messages
                if m.get("role") == "assistant"
                and type(m["content"]) is list
                and any(type(block) is dict and block.get("type") == "tool_use" for block in m["content"])
            )
        if ctx.provider == "deepseek":
            if not deepseek_thinks(body):
                return True
            needs_words = False
        else:
            if not moonshot_thinks(body):
                return True
            needs_words = not moonshot_takes_empty_reasoning(body)
        for m in messages:
            if m.get("role") == "assistant" and m.get("tool_calls"):
                reasoning = m.get("reasoning_content")
                if not isinstance(reasoning, str) or (needs_words and not reasoning):
                    return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        body = transcript.body
        if ctx.api == "anthropic-messages":
            if deepseek_thinks(body):
                self._thinking_blocks(transcript, ctx)
            return
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

    def _thinking_blocks(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            if entry.role != "assistant" or not entry.calls() or entry.has(THINKING):
                continue
            entry.parts = [Part(THINKING, dict(_STAND_IN_THINKING)), *entry.parts]
            entry.dirty = True
            ctx.report(
                self,
                "filled",
                entry,
                None,
                "put an empty thinking block first in a tool-calling assistant message (it had none; "
                "the model's thinking for it was not kept by the client)",
            )
