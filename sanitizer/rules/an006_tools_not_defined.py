from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ..dialects._base import call_names
from ._base import Context, Rule


class ToolsNotDefined(Rule):
    """
    What it repairs:
        A request whose history holds tool_use or tool_result blocks but that defines no
        ``tools``: a side call (a title or a summary) that reuses the agent's history without
        its tool list.

    Why:
        Anthropic: "Requests which include `tool_use` or `tool_result` blocks must define
        tools."
        Bedrock: "The toolConfig field must be defined when using toolUse and toolResult
        content blocks."

    Example:
        Before: {"messages": [..., assistant [tool_use "get_weather"], user [tool_result]], no tools}
        After:  {"tools": [{"name": "get_weather", "description": "...",
                 "input_schema": {"type": "object"}}], "tool_choice": {"type": "none"}, ...}

    Safety:
        Adds a stub definition for each tool the history uses (Bedrock: in ``toolConfig``)
        and, for Anthropic, unless the request chose otherwise, ``tool_choice: none`` so the
        model cannot call the stubs. The messages are untouched.
    """

    code = "AN006"
    name = "tools-not-defined"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.tools-required", "bedrock.B4")
    apis = frozenset({"anthropic-messages", "bedrock-converse"})
    also_for = frozenset({("openai-chat", "anthropic"), ("openai-chat", "bedrock")})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat body a gateway converts (for the other formats it is their own).
        return ctx.api == "openai-chat" and (
            bool(body.get("tools")) or not any(m.get("tool_calls") for m in body["messages"])
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # As earlier rules left them: legacy-function-call may have turned ``functions`` into tools.
        fields = transcript.fields()
        if ctx.dialect.has_tool_definitions(fields):
            return
        names = call_names(transcript)
        if not names:
            return
        updates = ctx.dialect.stub_tools(fields, names, ctx.policy.stub_tool_description)
        transcript.body_updates.update(updates)
        ctx.report(self, "added", None, None, f"added stub tool definitions for {', '.join(names)}")
