from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule


class DuplicateToolDefinition(Rule):
    """
    What it repairs:
        A tool list that defines the same tool twice, word for word: a framework that merges
        its own tools with an MCP server's, or adds a tool on every turn without checking.

    Why:
        Anthropic: "tools: Tool names must be unique."

    Example:
        Before: {"tools": [{"name": "ls", ...}, {"name": "read", ...}, {"name": "ls", ...}]}
        After:  {"tools": [{"name": "ls", ...}, {"name": "read", ...}]}

    Safety:
        Only a definition identical to an earlier one is removed, so the tools the model sees
        are the same. Two different definitions under one name are left as they are: which one
        the client meant is its choice, not Suture's.
    """

    code = "AN013"
    name = "duplicate-tool-definition"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A19",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        tools = transcript.body.get("tools")
        if type(tools) is not list:
            return
        first: dict[str, Any] = {}
        kept = []
        for index, tool in enumerate(tools):
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is str and name in first and first[name] == tool:
                detail = f"removed tools[{index}], a second identical definition of {name!r}"
                ctx.report(self, "dropped", None, None, detail)
                continue
            if type(name) is str:
                first.setdefault(name, tool)
            kept.append(tool)
        if len(kept) != len(tools):
            transcript.body_updates["tools"] = kept
