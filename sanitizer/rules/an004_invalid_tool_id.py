from __future__ import annotations

import re
from typing import ClassVar

from .._ir import SERVER_CALL, SERVER_RESULT, Part, Transcript
from ..dialects.anthropic_messages import SERVER_TOOL_ID
from ._base import Context, Rule
from ._ids import digest, rewrite_ids

_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_INVALID_SERVER_CHAR = re.compile(r"[^a-zA-Z0-9_]")
_SERVER_PREFIX = "srvtoolu_"


class InvalidToolId(Rule):
    """
    What it repairs:
        Tool-use ids the provider does not accept: ids from other providers such as Kimi's
        ``functions.bash:0``, OpenAI Responses ids containing ``|``, an empty id, or (Bedrock)
        an id longer than 64 characters. In Anthropic's format also a server tool's id that
        is not Anthropic's own ``srvtoolu_...``: a relay that mixes upstream channels, or a
        fallback model with built-in tools of its own (``ws_...``, ``call_...``), leaves its
        ``server_tool_use`` blocks in the history.

    Why:
        Anthropic: "messages.1.content.0.tool_use.id: String should match pattern
        '^[a-zA-Z0-9_-]+$'" and "messages.1.content.2.server_tool_use.id: String should match
        pattern '^srvtoolu_[a-zA-Z0-9_]+$'" (ding113/claude-code-hub#470)
        Bedrock: "1 validation error detected: Value 'functions.ls:0' at
        'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: ..."

    Example:
        Before: assistant [tool_use id "functions.bash:0"] / user [tool_result "functions.bash:0"]
        After:  assistant [tool_use id "functions_bash_0"] / user [tool_result "functions_bash_0"]
        Before: assistant [server_tool_use id "ws_0c1f", web_search_tool_result "ws_0c1f", text]
        After:  assistant [server_tool_use id "srvtoolu_ws_0c1f",
                web_search_tool_result "srvtoolu_ws_0c1f", text]

    Safety:
        Rewrites the id in the call and in every result for it, the same way, so pairs stay
        pairs. Invalid characters become ``_`` (and a server tool's id gets the ``srvtoolu_``
        prefix); when that would collide with another id (or the id is empty) a short hash of
        the original is appended, so the mapping is deterministic and one-to-one. An MCP
        connector's ``mcp_tool_use`` ids are not server tool ids and are left alone.
    """

    code = "AN004"
    name = "invalid-tool-id"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A12", "bedrock.B9")
    apis = frozenset({"anthropic-messages", "bedrock-converse"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        valid = ctx.dialect.tool_id_pattern
        if valid is not None:
            rewrite_ids(transcript, ctx, self, valid, readable_id)
        if ctx.api == "anthropic-messages":
            rewrite_ids(transcript, ctx, self, SERVER_TOOL_ID, server_tool_id, _SERVER_PARTS, _server_tool_part)


def readable_id(original: str) -> str:
    """Invalid characters become ``_``; an empty or repeated result gets a short hash."""
    cleaned = _INVALID_CHAR.sub("_", original)[:48]
    return cleaned if cleaned and "\x00" not in original else f"{cleaned or 'toolu'}_{digest(original)}"


def server_tool_id(original: str) -> str:
    """``srvtoolu_`` and the original with invalid characters as ``_``; a repeated one gets a short hash."""
    cleaned = _INVALID_SERVER_CHAR.sub("_", original)[:48]
    if not cleaned or "\x00" in original:
        cleaned = f"{cleaned}_{digest(original)}"
    return cleaned if cleaned.startswith(_SERVER_PREFIX) else _SERVER_PREFIX + cleaned.lstrip("_")


_SERVER_PARTS = frozenset({SERVER_CALL, SERVER_RESULT})


def _server_tool_part(part: Part) -> bool:
    # An mcp_tool_use and its mcp_tool_result are server calls too, with ids of their own kind.
    kind = part.raw.get("type") if isinstance(part.raw, dict) else None
    return (part.kind == SERVER_CALL and kind == "server_tool_use") or (
        part.kind == SERVER_RESULT and kind != "mcp_tool_result"
    )
