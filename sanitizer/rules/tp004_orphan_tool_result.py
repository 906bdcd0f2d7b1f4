from __future__ import annotations

import json
from typing import Any, ClassVar

from .._ir import CALL, RESULT, Entry, Part, Transcript
from ..providers import binding
from ._base import Context, Repairer, Rule


class OrphanToolResult(Rule):
    """
    What it repairs:
        A tool result whose id answers no tool call anywhere in the transcript, typically left
        behind when history truncation or compaction cut the call away.

    Why:
        OpenAI: "Invalid parameter: messages with role 'tool' must be a response to a
        preceeding message with 'tool_calls'."
        Anthropic: "messages.0.content.0: unexpected `tool_use_id` found in `tool_result`
        blocks: toolu_0. Each `tool_result` block must have a corresponding `tool_use` block
        in the previous message."
        OpenAI Responses: "No tool call found for function call output with call_id ghost."
        vLLM's Responses endpoint (gpt-oss models): "No call message found for
        call_82802943873c42629d7e0eb32fb1d505 None" (langchain-ai/langchain#32885).
        SGLang (gpt-oss, MiniMax-M2 templates): "Message has tool role, but there was no previous
        assistant message with a tool call!" (sgl-project/sglang PR#14748)

    Example:
        Before: user "hi" / assistant "hello" / tool result for ghost_1 "x" / user "continue"
        After (policy fold): user "hi" / assistant "hello" /
                user "Result of tool call ghost_1 returned earlier: x" / user "continue"
        After (policy drop): user "hi" / assistant "hello" / user "continue"

    Safety:
        fold (default) keeps what the tool returned as plain text in the user turn, labelled
        with the tool's name (where the result names it) and the call id: in its own user
        message where results are messages of their own (OpenAI Chat and Responses), else in
        the same user message, after its remaining results (Anthropic, Gemini and Bedrock want
        results first). drop removes the result and keeps its full content in the repair
        record's detail only. Either way a message left with nothing in it is removed and a
        user message keeps its other blocks. With OpenAI Responses' previous_response_id or
        conversation the calls live on the server, so no output is taken for an orphan there,
        unless a gateway bridges the body to a provider without that server (DeepSeek through
        LiteLLM), where every output whose call the body does not hold is an orphan.
    """

    code = "TP004"
    name = "orphan-tool-result"
    fixes: ClassVar[tuple[str, ...]] = (
        "openai.O2",
        "openai.O3",
        "deepseek.D2",
        "dashscope.X2",
        "cerebras.orphan-tool-message",
        "mistral.M2",
        "anthropic.A2",
        "responses.R2",
        "gemini.G2",
        "bedrock.B2",
        "responses.R7",
        "vllm.VR1",
        "sglang.tool-role-without-call",
    )

    def looks_past(self, api: str, provider: str | None) -> bool:
        # The format's own check takes a stored chain's outputs as answered; bridged, they are not.
        return binding(api, provider).bridged

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only where the body is bridged (looks_past).
        return not ctx.dialect.history_elsewhere(body)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if ctx.dialect.history_still_elsewhere(transcript) and not _bridged(ctx):
            return
        # Plain loops: this runs on every turn of a broken session.
        calls: set[str | None] = set()
        for entry in transcript.entries:
            for part in entry.parts:
                if part.kind == CALL:
                    calls.add(part.call_id)
        fold = ctx.policy.orphan_tool_result == "fold"
        removals = []
        for index, entry in enumerate(transcript.entries):
            orphans = None
            for part in entry.parts:
                if part.kind == RESULT and part.call_id not in calls:
                    if orphans is None:
                        orphans = []
                    orphans.append(part)
            if orphans is None:
                continue
            if fold:
                transcript.entries[index] = self.fold(entry, orphans, ctx)
                continue
            for part in orphans:
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    part.call_id,
                    f"dropped a result that answers no call; its content was: {ctx.describe(part)}",
                )
            removals.append((entry, orphans))
        transcript.remove_parts(removals)

    def fold(self, entry: Entry, orphans: list[Part], ctx: Context, reporter: Repairer | None = None) -> Entry:
        """``entry`` with each of ``orphans`` turned into labelled user text (reported as ``reporter``'s)."""
        doomed = {id(p) for p in orphans}
        texts: list[Entry] = []
        for part in orphans:
            content, text = folded_text(part, ctx)
            ctx.report(
                reporter or self,
                "folded",
                entry,
                part.call_id,
                f"turned a result that answers no call into user text; its content was: {content}",
            )
            texts.append(ctx.dialect.text_entry("user", text))
        if not ctx.dialect.results_share_message:
            # The result was a message of its own (a tool message, an output item): it becomes a
            # user message where it stood.
            (folded,) = texts
            folded.origin = entry.origin
            return folded
        kept = [p for p in entry.parts if id(p) not in doomed]
        # The folded texts go where the orphans were, but never before a result that stays: the
        # results of a turn come first (Anthropic rejects text before a tool_result).
        last_result = max((n for n, p in enumerate(kept) if p.kind == RESULT), default=-1)
        first_orphan = next(n for n, p in enumerate(entry.parts) if id(p) in doomed)
        before = sum(1 for p in entry.parts[:first_orphan] if id(p) not in doomed)
        at = max(before, last_result + 1)
        entry.parts = kept[:at] + [t.parts[0] for t in texts] + kept[at:]
        entry.dirty = True
        return entry


def _bridged(ctx: Context) -> bool:
    return binding(ctx.api, ctx.provider).bridged


def folded_text(part: Part, ctx: Context) -> tuple[str, str]:
    """What a result says, as plain text, and the labelled user text it becomes when folded."""
    content = _plain(ctx.dialect.payload(part))
    return content, _label(_result_name(part), ctx.dialect.public_id(part.call_id), content)


def _result_name(part: Part) -> str | None:
    # Gemini's functionResponse names its tool (part.name); an OpenAI Chat tool message may too.
    if part.name:
        return part.name
    name = part.raw.get("name") if isinstance(part.raw, dict) else None
    return name if isinstance(name, str) and name else None


def _label(name: str | None, call_id: str | None, content: str) -> str:
    if name and call_id:
        label = f"Result of tool `{name}` (call {call_id})"
    elif name:
        label = f"Result of tool `{name}`"
    elif call_id:
        label = f"Result of tool call {call_id}"
    else:
        label = "Result of a tool call"
    if not content.strip():
        return f"{label} returned earlier, with no output."
    return f"{label} returned earlier: {content}"


def _plain(payload: Any) -> str:
    """What a result says, as text: its text parts as they are, anything else as compact JSON."""
    if isinstance(payload, str):
        return payload
    if payload is None:
        return ""
    if isinstance(payload, list):
        return "\n".join(_plain_block(block) for block in payload)
    return _json(payload)


def _plain_block(block: Any) -> str:
    if isinstance(block, str):
        return block
    # Text blocks of every format: {"type": "text", "text": ...}, Bedrock's {"text": ...},
    # Responses' input_text / output_text.
    if isinstance(block, dict) and isinstance(block.get("text"), str) and block.get("type", "text") in _TEXT_TYPES:
        return str(block["text"])
    return _json(block)


# A tuple: a block whose type cannot be hashed (a list, say) is not text rather than a TypeError.
_TEXT_TYPES = ("text", "input_text", "output_text")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
