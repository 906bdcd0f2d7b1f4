from __future__ import annotations

import re
from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from ._ids import digest, rewrite_ids

_INVALID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")


class InvalidToolId(Rule):
    """
    What it repairs:
        Tool-use ids the provider does not accept: ids from other providers such as Kimi's
        ``functions.bash:0``, OpenAI Responses ids containing ``|``, an empty id, or (Bedrock)
        an id longer than 64 characters.

    Why:
        Anthropic: "messages.1.content.0.tool_use.id: String should match pattern
        '^[a-zA-Z0-9_-]+$'"
        Bedrock: "1 validation error detected: Value 'functions.ls:0' at
        'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: ..."

    Example:
        Before: assistant [tool_use id "functions.bash:0"] / user [tool_result "functions.bash:0"]
        After:  assistant [tool_use id "functions_bash_0"] / user [tool_result "functions_bash_0"]

    Safety:
        Rewrites the id in the call and in every result for it, the same way, so pairs stay
        pairs. Invalid characters become ``_``; when that would collide with another id (or
        the id is empty) a short hash of the original is appended, so the mapping is
        deterministic and one-to-one.
    """

    code = "AN004"
    name = "invalid-tool-id"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A12", "bedrock.B9")
    apis = frozenset({"anthropic-messages", "bedrock-converse"})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        valid = ctx.dialect.tool_id_pattern
        if valid is not None:
            rewrite_ids(transcript, ctx, self, valid, readable_id)


def readable_id(original: str) -> str:
    """Invalid characters become ``_``; an empty or repeated result gets a short hash."""
    cleaned = _INVALID_CHAR.sub("_", original)[:48]
    return cleaned if cleaned and "\x00" not in original else f"{cleaned or 'toolu'}_{digest(original)}"
