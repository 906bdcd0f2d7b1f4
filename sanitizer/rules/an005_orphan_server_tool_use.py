from __future__ import annotations

from typing import Any, ClassVar

from .._ir import SERVER_CALL, SERVER_RESULT, Transcript
from ._base import Context, Rule


class OrphanServerToolUse(Rule):
    """
    What it repairs:
        A ``server_tool_use`` block (web search, code execution, MCP...) whose result block
        never came back: the stream was cut while the server tool ran.

    Why:
        Anthropic: "messages.1: `web_search` tool use with id `srvtoolu_01D2yBujTs8ZfsawS5cefDNK`
        was found without a corresponding `web_search_tool_result` block"

    Example:
        Before: assistant [text "Searching", server_tool_use srvtoolu_1] / user "go on"
        After:  assistant [text "Searching"] / user "go on"

    Safety:
        Removes the unfinished server call; the message keeps its other blocks, and a message
        left empty is removed. A server call in the final assistant message is left alone:
        after a ``pause_turn`` the client sends it back as-is for the server to continue
        (not when bound for Mistral, which has no server tools to continue with). The
        result may sit in a later assistant message (a pair split by ``pause_turn``); that
        counts as answered.
    """

    code = "AN005"
    name = "orphan-server-tool-use"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A4",)
    apis = frozenset({"anthropic-messages"})

    def looks_past(self, api: str, provider: str | None) -> bool:
        # The format's check takes a final server call for a pause_turn continuation.
        return provider == "mistral"

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        last = body["messages"][-1]
        content = last.get("content") if last.get("role") == "assistant" else None
        return type(content) is not list or not any(
            type(block) is dict and block.get("type") == "server_tool_use" for block in content
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # Plain loops, and nothing more once no server call is found: most transcripts hold none.
        answered: set[str | None] = set()
        called = False
        for entry in transcript.entries:
            for part in entry.parts:
                if part.kind == SERVER_RESULT:
                    answered.add(part.call_id)
                elif part.kind == SERVER_CALL:
                    called = True
        if not called:
            return
        # Mistral has no server tools: a turn paused on one cannot go on there, and
        # unsupported-prefill puts a user message after it.
        last = transcript.entries[-1] if transcript.entries and ctx.provider != "mistral" else None
        removals = []
        for entry in transcript.entries:
            if entry is last:
                continue
            orphans = [p for p in entry.parts if p.kind == SERVER_CALL and p.call_id not in answered]
            if not orphans:
                continue
            for part in orphans:
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    part.call_id,
                    f"removed a server tool call that never got its result: {ctx.describe(part)}",
                )
            removals.append((entry, orphans))
        transcript.remove_parts(removals)
