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
            calls = [
                {"id": i, "type": "function", "function": {"name": "tool_" + i[-1], "arguments": "{}"}} for i in ev[1]
            ]
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
    return {
        "model": "claude",
        "max_tokens": 100,
        "tools": [{"name": "t", "input_schema": {"type": "object"}}],
        "messages": messages,
    }


def to_responses(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "system"):
            items.append({"type": "message", "role": "user" if ev[0] == "user" else "developer", "content": ev[1]})
        elif ev[0] == "assistant":
            items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ev[1]}]})
        elif ev[0] == "calls":
            if ev[2]:
                items.append({"type": "reasoning", "id": f"rs_{len(items)}", "summary": []})
            items += [
                {"type": "function_call", "call_id": i, "name": "tool_" + i[-1], "arguments": "{}"} for i in ev[1]
            ]
        else:
            items.append({"type": "function_call_output", "call_id": ev[1], "output": ev[2]})
    return {"model": "gpt-5", "input": items}


def to_gemini(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for ev in [*evs, ("user", "over to you")]:
        if ev[0] in ("user", "system"):
            contents.append({"role": "user", "parts": [{"text": ev[1]}]})
        elif ev[0] == "assistant":
            contents.append({"role": "model", "parts": [{"text": ev[1] or "..."}]})
        elif ev[0] == "calls":
            # Half the calls carry ids, half are matched by name and order, as Gemini 2 sends them.
            calls = [
                {"functionCall": {"name": "tool_" + i[-1], "args": {}, **({} if ev[2] else {"id": i})}} for i in ev[1]
            ]
            contents.append({"role": "model", "parts": calls})
        else:
            contents.append(
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "tool_" + ev[1][-1], "id": ev[1], "response": {"output": ev[2]}}}
                    ],
                }
            )
    return {"contents": contents}


def to_bedrock(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "system"):
            messages.append({"role": "user", "content": [{"text": ev[1]}]})
        elif ev[0] == "assistant":
            messages.append({"role": "assistant", "content": [{"text": ev[1]}]})
        elif ev[0] == "calls":
            blocks: list[dict[str, Any]] = [{"text": "thinking aloud"}] if ev[2] else []
            blocks += [{"toolUse": {"toolUseId": i, "name": "tool_" + i[-1], "input": {}}} for i in ev[1]]
            messages.append({"role": "assistant", "content": blocks})
        else:
            messages.append(
                {"role": "user", "content": [{"toolResult": {"toolUseId": ev[1], "content": [{"text": ev[2]}]}}]}
            )
    return {
        "modelId": "m",
        "toolConfig": {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {}}}}]},
        "messages": messages,
    }


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    return body.get("messages") or body.get("input") or body.get("contents") or []


def _texts_of(value: Any) -> list[str]:
    """Every string under a ``text`` key (or a bare string content), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in _texts_of(v)]
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return [value["text"]]
        return [t for k, v in value.items() if k in ("content", "parts") for t in _texts_of(v)]
    return []


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every non-blank thing the user typed, in order."""
    out = []
    for m in _items(body):
        if m.get("role") in ("user", "system", "developer") and not _has_results(m):
            out += [t for t in _texts_of(m) if t.strip() and t != "over to you"]
        elif m.get("role") == "user":
            out += [
                t
                for t in _texts_of([p for p in m.get("content") or m.get("parts") or [] if not _is_result(p)])
                if t.strip()
            ]
    return out


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and (
        "toolResult" in block or "functionResponse" in block or block.get("type") == "tool_result"
    )


def _has_results(m: dict[str, Any]) -> bool:
    content = m.get("content") or m.get("parts") or []
    return isinstance(content, list) and any(_is_result(b) for b in content)


def real_results(body: dict[str, Any]) -> list[str]:
    """The content of every tool result that is not synthetic (they all start with ``out-``)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and value.startswith("out-"):
            found.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)

    walk(_items(body))
    return found
