from __future__ import annotations

from typing import Any

from .._ir import CALL, Transcript
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

    Example:
        Before: {"messages": [..., assistant [tool_use "get_weather"], user [tool_result]], no tools}
        After:  {"tools": [{"name": "get_weather", "description": "...",
                 "input_schema": {"type": "object"}}], "tool_choice": {"type": "none"}, ...}

    Safety:
        Adds a stub definition for each tool the history uses and, unless the request chose
        otherwise, ``tool_choice: none`` so the model cannot call the stubs. The messages are
        untouched.
    """

    code = "AN006"
    name = "tools-not-defined"
    apis = frozenset({"anthropic-messages"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if transcript.body.get("tools"):
            return
        names = list(dict.fromkeys(p.name or "unknown_tool" for _, p in transcript.parts() if p.kind == CALL))
        if not names:
            return
        tools: list[dict[str, Any]] = [
            {"name": name, "description": ctx.policy.stub_tool_description, "input_schema": {"type": "object"}}
            for name in names
        ]
        transcript.body_updates["tools"] = tools
        if "tool_choice" not in transcript.body:
            transcript.body_updates["tool_choice"] = {"type": "none"}
        ctx.report(self, "added", None, None, f"added stub tool definitions for {', '.join(names)}")
