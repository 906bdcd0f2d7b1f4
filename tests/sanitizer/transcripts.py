"""Hypothesis strategies: broken agent transcripts, in OpenAI Chat and Anthropic Messages shape.

A transcript is generated as abstract events, then written in either shape, so both dialects are
exercised by the same damage: orphan calls, late and early results, duplicates, reused ids,
interrupt-recovery messages, blank text.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

IDS = ["call_a", "call_b", "call_c", "call_d", "functions.ls:0"]
RECOVERY = "I noticed that you have interrupted me. What can I do for you?"

event = st.one_of(
    st.tuples(st.just("user"), st.sampled_from(["hi", "go on", "停！换个做法", "stop", " "])),
    st.tuples(st.just("assistant"), st.sampled_from(["ok", RECOVERY, "", "partial"])),
    st.tuples(st.just("calls"), st.lists(st.sampled_from(IDS), min_size=1, max_size=3), st.booleans()),
    st.tuples(st.just("result"), st.sampled_from([*IDS, "ghost"]), st.sampled_from(["out-1", "out-2", "out-3"])),
    st.tuples(st.just("system"), st.just("<system-reminder>be brief</system-reminder>")),
)
# Agents always open with the user's task; a transcript of nothing but orphan results has
# nothing left to send once they are dropped.
events = st.lists(event, min_size=0, max_size=14).map(lambda evs: [("user", "do the task"), *evs])


def to_openai(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] == "user":
            messages.append({"role": "user", "content": ev[1]})
        elif ev[0] == "assistant":
            messages.append({"role": "assistant", "content": ev[1]})
        elif ev[0] == "system":
            messages.append({"role": "system", "content": ev[1]})
        elif ev[0] == "calls":
            calls = [{"id": i, "type": "function", "function": {"name": "tool_" + i[-1], "arguments": "{}"}} for i in ev[1]]
            messages.append({"role": "assistant", "content": "thinking aloud" if ev[2] else None, "tool_calls": calls})
        else:
            messages.append({"role": "tool", "tool_call_id": ev[1], "content": ev[2]})
    return {"model": "gpt-4o", "messages": messages}


def to_anthropic(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "system"):
            messages.append({"role": "user", "content": ev[1]})
        elif ev[0] == "assistant":
            messages.append({"role": "assistant", "content": [{"type": "text", "text": ev[1]}]})
        elif ev[0] == "calls":
            blocks: list[dict[str, Any]] = []
            if ev[2]:
                blocks.append({"type": "thinking", "thinking": "hmm", "signature": "sig"})
            blocks += [{"type": "tool_use", "id": i, "name": "tool_" + i[-1], "input": {}} for i in ev[1]]
            messages.append({"role": "assistant", "content": blocks})
        else:
            block = {"type": "tool_result", "tool_use_id": ev[1], "content": ev[2]}
            messages.append({"role": "user", "content": [block]})
    return {"model": "claude", "max_tokens": 100, "tools": [{"name": "t", "input_schema": {"type": "object"}}],
            "messages": messages}


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every non-blank thing the user typed, in order."""
    out = []
    for m in body["messages"]:
        if m["role"] not in ("user", "system"):
            continue
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out += [b["text"] for b in blocks if b.get("type") == "text" and b["text"].strip()]
    return out


def real_results(body: dict[str, Any]) -> list[str]:
    """The content of every tool result that is not synthetic, in order."""
    out = []
    for m in body["messages"]:
        if m["role"] == "tool":
            out.append(m["content"])
        elif isinstance(m.get("content"), list):
            out += [b["content"] for b in m["content"] if b.get("type") == "tool_result" and not b.get("is_error")]
    return [r for r in out if r.startswith("out-")]
