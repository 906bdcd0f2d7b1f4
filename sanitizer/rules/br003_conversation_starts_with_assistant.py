from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from .gm002_call_turn_without_user_turn import LEAD_IN_TEXT


class ConversationStartsWithAssistant(Rule):
    """
    What it repairs:
        A Converse conversation whose first message is the assistant's: a history cut to its
        last turns by a client that trims old messages, or one whose opening user turn a
        framework moved into the system prompt. The same in a Chat body a gateway converts
        for Bedrock, once its system messages are set aside, and in an Anthropic Messages body
        bound for Bedrock (InvokeModel). In a Chat body bound for Zhipu (GLM), a conversation
        with no user message at all, which Zhipu refuses wherever it starts: an agent's own
        calls and results behind its system prompt, a subagent's report sent as an assistant
        message. The same bound for LM Studio, whose Qwen3.5 and Qwen3.6 templates refuse it.

    Why:
        Bedrock: "A conversation must start with a user message. Try again with a conversation
        that starts with a user message." and, for an Anthropic Messages body, "messages: first
        message must use the "user" role" (anthropics/anthropic-sdk-typescript#622, which
        Anthropic's own API no longer answers).
        Zhipu: "The messages parameter is illegal. Please check the documentation." (code 1214;
        anomalyco/opencode#2557: "zero `user` role messages"), "messages 参数非法。请检查文档。"
        (MetaGLM/zhipuai-sdk-python-v4#14)
        LM Studio (Qwen3.5, Qwen3.6): "Error rendering prompt with jinja template: "No user
        query found in messages."." (lmstudio-ai/lmstudio-bug-tracker#1655, #1855)

    Example:
        Before: assistant "Here is the plan." / user "go on"
        After:  user "(Conversation continues.)" / assistant "Here is the plan." / user "go on"
        Before (bound for Zhipu): system "Call tools." / assistant calls createBuildings /
                tool "{\"success\":false}"
        After:  system "Call tools." / user "(Conversation continues.)" / assistant calls
                createBuildings / tool "{\"success\":false}"

    Safety:
        Adds one short user message with fixed text at the start; nothing is changed or
        dropped. The text claims nothing and never changes, so prompt caches stay valid. Bound
        for Zhipu or LM Studio, only where no message is the user's (a conversation that has one
        elsewhere is left as it is), before the first message past the system messages; for LM
        Studio with any model, since a template Suture does not know by name may ask the same.
    """

    code = "BR003"
    name = "conversation-starts-with-assistant"
    apis = frozenset({"bedrock-converse"})
    also_for = frozenset(
        {
            ("openai-chat", "bedrock"),
            ("anthropic-messages", "bedrock"),
            ("openai-chat", "zhipu"),
            ("openai-chat", "lmstudio"),
        }
    )
    fixes: ClassVar[tuple[str, ...]] = (
        "bedrock.B8",
        "anthropic.A10",
        "zhipu.1214-no-user-message",
        "lmstudio.no-user-query",
    )

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat or Anthropic body bound for Bedrock, or a Chat body bound for Zhipu
        # or LM Studio (in Converse it is one of the format's own).
        if ctx.api == "bedrock-converse":
            return False
        if ctx.provider in _USER_ANYWHERE:
            # A conversation of system messages alone is empty-transcript's.
            messages = body["messages"]
            return all(m.get("role") in _SYSTEM for m in messages) or any(m.get("role") == "user" for m in messages)
        first = next((m for m in body["messages"] if m.get("role") not in _SYSTEM), None)
        return first is None or first.get("role") != "assistant"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        if ctx.provider in _USER_ANYWHERE:
            _lead_in_where_no_user(self, transcript, ctx)
            return
        # A Chat body's system messages become Converse's system field (an Anthropic body's went to
        # its own in system-role-message): the turn after them is first.
        first = next((i for i, e in enumerate(entries) if e.role not in _SYSTEM), None)
        if first is not None and entries[first].role == "assistant":
            ctx.report(
                self, "inserted", entries[first], None, "put a short user message before the first assistant message"
            )
            transcript.entries = [*entries[:first], ctx.dialect.text_entry("user", LEAD_IN_TEXT), *entries[first:]]


def _lead_in_where_no_user(rule: Rule, transcript: Transcript, ctx: Context) -> None:
    # Zhipu and the Qwen templates ask for a user message anywhere, not first: a conversation that
    # has one is left as it is.
    entries = transcript.entries
    if any(e.role == "user" for e in entries):
        return
    first = next((i for i, e in enumerate(entries) if e.role not in _SYSTEM), None)
    if first is None:
        return
    ctx.report(rule, "inserted", entries[first], None, "put a short user message before a conversation that had none")
    transcript.entries = [*entries[:first], ctx.dialect.text_entry("user", LEAD_IN_TEXT), *entries[first:]]


_SYSTEM = frozenset(("system", "developer"))
# Providers that ask for a user message anywhere in the conversation, not first.
_USER_ANYWHERE = frozenset(("zhipu", "lmstudio"))
