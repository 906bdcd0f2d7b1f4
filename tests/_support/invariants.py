"""The providers' transcript rules, asserted directly on a repaired body (independent of the sanitizer)."""

from __future__ import annotations

import re
from typing import Any

TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def openai_problems(body: dict[str, Any]) -> list[str]:
    problems = []
    messages = body["messages"]
    seen: set[str] = set()
    i = 0
    while i < len(messages):
        m = messages[i]
        if m["role"] == "tool":
            problems.append(f"messages[{i}]: tool message without a preceding call")
        if m["role"] == "assistant" and "tool_calls" in m:
            ids = [c["id"] for c in m["tool_calls"]]
            if not ids:
                problems.append(f"messages[{i}]: empty tool_calls")
            for call_id in ids:
                if call_id in seen:
                    problems.append(f"messages[{i}]: reused id {call_id}")
                seen.add(call_id)
            answered = []
            j = i + 1
            while j < len(messages) and messages[j]["role"] == "tool":
                answered.append(messages[j]["tool_call_id"])
                j += 1
            if sorted(answered) != sorted(ids):
                problems.append(f"messages[{i}]: calls {ids} answered by {answered}")
            i = j
            continue
        i += 1
    return problems


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def anthropic_problems(body: dict[str, Any]) -> list[str]:
    problems = []
    merged: list[tuple[str, list[dict[str, Any]]]] = []
    messages = body["messages"]
    final = len(messages)
    while final and messages[final - 1]["role"] == "assistant":
        final -= 1
    for n, m in enumerate(messages):
        blocks = _blocks(m["content"])
        if not blocks and not (n == len(messages) - 1 and m["role"] == "assistant"):
            problems.append(f"messages[{n}]: empty content")
        # Whitespace passes next to text that says something (LibreChat-AI/agents PR#124), but not
        # in the final assistant turn; empty text never does.
        spoken = n < final and any(b["type"] == "text" and b["text"].strip() for b in blocks)
        for b in blocks:
            if b["type"] == "text" and not b["text"].strip() and not (spoken and b["text"]):
                problems.append(f"messages[{n}]: blank text")
        if merged and merged[-1][0] == m["role"]:
            merged[-1][1].extend(blocks)
        else:
            merged.append((m["role"], blocks))
    seen: set[str] = set()
    has_tool_blocks = False
    for k, (role, blocks) in enumerate(merged):
        if role == "assistant":
            ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
            has_tool_blocks = has_tool_blocks or bool(ids)
            for call_id in ids:
                if call_id in seen or not TOOL_ID.match(call_id):
                    problems.append(f"turn {k}: bad or reused id {call_id!r}")
                seen.add(call_id)
            if any(b["type"] == "tool_result" for b in blocks):
                problems.append(f"turn {k}: tool_result in an assistant turn")
            nxt = merged[k + 1][1] if k + 1 < len(merged) else None
            if ids and nxt is None:
                problems.append(f"turn {k}: trailing unanswered calls {ids}")
            if ids and nxt is not None:
                lead = []
                for b in nxt:
                    if b["type"] != "tool_result":
                        break
                    lead.append(b["tool_use_id"])
                if sorted(lead) != sorted(ids):
                    problems.append(f"turn {k}: calls {ids} answered first by {lead}")
        else:
            prev_ids = [b["id"] for b in merged[k - 1][1] if b["type"] == "tool_use"] if k > 0 else []
            results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
            has_tool_blocks = has_tool_blocks or bool(results)
            extra = [r for r in results if r not in prev_ids]
            if extra or len(results) != len(set(results)):
                problems.append(f"turn {k}: results {results} for calls {prev_ids}")
    if has_tool_blocks and not body.get("tools"):
        problems.append("tool blocks without tools")
    return problems


def problems(body: dict[str, Any], api: str) -> list[str]:
    """Independent checks for Chat and Anthropic; the other formats rely on the validator alone."""
    if api == "openai-chat":
        return openai_problems(body)
    if api == "anthropic-messages":
        return anthropic_problems(body)
    return []
