from __future__ import annotations

from typing import Any, ClassVar

from .._ir import SERVER_CALL, SERVER_RESULT, TEXT, Entry, Part, Transcript
from ._base import Context, Rule
from .tp004_orphan_tool_result import _label, _plain


class OrphanServerToolResult(Rule):
    """
    What it repairs:
        A server tool's result block (``advisor_tool_result``, ``web_search_tool_result``,
        ``code_execution_tool_result``...) in an assistant turn with no ``server_tool_use``
        block before it: the assistant message was replayed from its second half, or a
        client kept the result and dropped the call. Policy ``orphan_tool_result``.

    Why:
        Anthropic: "messages.7.content.0: unexpected `tool_use_id` found in
        `advisor_tool_result` blocks: srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc. Each
        `advisor_tool_result` block must have a corresponding `server_tool_use` block before
        it."

    Example:
        Before: user "review my plan" / assistant [advisor_tool_result srvtoolu_1 "Looks
                sound.", text "The advisor agrees."]
        After (policy fold): user "review my plan" / assistant [text "Result of tool
                `advisor` (call srvtoolu_1) returned earlier: Looks sound.", text "The advisor
                agrees."]
        After (policy drop): user "review my plan" / assistant [text "The advisor agrees."]

    Safety:
        fold (default) keeps what the server tool returned as plain text where the block
        stood, labelled with the tool (from the block's type) and the call id; its text parts
        as they are, anything else (search results, encrypted content) as compact JSON. drop
        removes the block and keeps its full content in the repair record only. A result
        whose ``server_tool_use`` is in the same turn, even in an earlier message of it, is
        left alone; an assistant message left with nothing in it is removed.
    """

    code = "AN015"
    name = "orphan-server-tool-result"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A2",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        fold = ctx.policy.orphan_tool_result == "fold"
        removals: list[tuple[Entry, list[Part]]] = []
        # Anthropic pairs a server result with a server_tool_use earlier in the same (merged)
        # assistant turn.
        opened: set[str | None] = set()
        previous = None
        for entry in transcript.entries:
            if entry.role != "assistant" or previous != "assistant":
                opened = set()
            previous = entry.role
            if entry.role != "assistant":
                continue
            orphans: list[Part] = []
            for part in entry.parts:
                if part.kind == SERVER_CALL:
                    opened.add(part.call_id)
                elif part.kind == SERVER_RESULT and part.call_id is not None:
                    if part.call_id in opened:
                        opened.discard(part.call_id)
                    else:
                        orphans.append(part)
            if not orphans:
                continue
            if fold:
                self._fold(entry, orphans, ctx)
                continue
            for part in orphans:
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    part.call_id,
                    "dropped a server tool result whose call is not in the turn; "
                    f"its content was: {ctx.describe(part)}",
                )
            removals.append((entry, orphans))
        transcript.remove_parts(removals)

    def _fold(self, entry: Entry, orphans: list[Part], ctx: Context) -> None:
        doomed = {id(p): p for p in orphans}
        parts = []
        for part in entry.parts:
            if id(part) not in doomed:
                parts.append(part)
                continue
            content = _said(ctx.dialect.payload(part))
            ctx.report(
                self,
                "folded",
                entry,
                part.call_id,
                f"turned a server tool result whose call is not in the turn into text; its content was: {content}",
            )
            text = _label(_tool_name(part), part.call_id, content)
            parts.append(Part(TEXT, {"type": "text", "text": text}))
        entry.parts = parts
        entry.dirty = True


def _said(payload: Any) -> str:
    # An advisor's result is one object holding its text ({"type": "advisor_result", "text": ...}).
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return str(payload["text"])
    return _plain(payload)


def _tool_name(part: Part) -> str | None:
    kind = part.raw.get("type") if isinstance(part.raw, dict) else None
    return kind.removesuffix("_tool_result") if isinstance(kind, str) else None
