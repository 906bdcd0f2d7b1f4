"""The before/after model and its terminal view: what a user reads to understand a repair."""

from __future__ import annotations

from typing import Any

from proxy.ui.terminal import cells, render
from proxy.ui.transcript import DROPPED, FOLDED, MOVED, RENAMED, SYNTHETIC, compare
from sanitizer import Policy, sanitize
from tests._support.page import INTERRUPTED_CHAT


def repaired(body: dict[str, Any], api: str, **kw: Any) -> Any:
    result = sanitize(body, api=api, **kw)
    return compare(body, result.body, [r.as_dict() for r in result.repairs], api)


def test_synthetic_result_sits_next_to_its_call_and_the_recovery_message_is_moved() -> None:
    diff = repaired({"model": "gpt-4o", "messages": INTERRUPTED_CHAT}, "openai-chat")
    after = diff.after
    call = next(i for i, row in enumerate(after) if any(item.id == "call_slow_1" for item in row.items))
    synthetic = after[call + 1]
    assert synthetic.marks == (SYNTHETIC,)
    assert [(item.kind, item.id) for item in synthetic.items] == [("result", "call_slow_1")]
    assert "interrupted" in synthetic.text
    recovery = next(row for row in after if row.text.startswith("I noticed"))
    assert MOVED in recovery.marks and recovery.note == "was #2"
    assert MOVED in diff.before[2].marks and diff.before[2].note == f"now #{recovery.index}"
    assert diff.before[2].repairs == ("TP002",)
    # The real result stayed where the repair left it: not marked.
    assert next(row for row in after if row.text == "Sunny").marks == ()


def test_anthropic_folded_result_and_dropped_blank_block() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_ghost", "content": "42"}]},
        ],
    }
    diff = repaired(body, "anthropic-messages")
    assert diff.changed
    marks = {m for row in (*diff.before, *diff.after) for m in row.marks}
    assert marks & {FOLDED, DROPPED, "changed"}, diff


def test_renamed_ids_are_marked() -> None:
    body = {
        "model": "mistral-large-latest",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_abc_long_id", "type": "function", "function": {"name": "w", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_abc_long_id", "content": "Sunny"},
        ],
    }
    diff = repaired(body, "openai-chat", provider="mistral")
    renamed = [row for row in diff.after if RENAMED in row.marks]
    assert renamed and "call_abc_long_id →" in renamed[0].note


def test_nothing_forwarded_shows_one_unmarked_side() -> None:
    diff = compare({"messages": [{"role": "user", "content": "hi"}]}, None, [], "openai-chat")
    assert not diff.forwarded and not diff.changed and diff.after == diff.before


def test_drop_policy_marks_the_dropped_call() -> None:
    body = {"model": "gpt-4o", "messages": INTERRUPTED_CHAT[:4]}
    result = sanitize(body, api="openai-chat", policy=Policy(orphan_tool_call="drop"))
    diff = compare(body, result.body, [r.as_dict() for r in result.repairs], "openai-chat")
    assert any(m in (DROPPED, "changed") for row in diff.before for m in row.marks)


def test_terminal_view_keeps_columns_aligned_with_wide_characters() -> None:
    diff = repaired({"model": "gpt-4o", "messages": INTERRUPTED_CHAT}, "openai-chat")
    text = render(diff, width=90)
    lines = text.splitlines()
    assert lines[0] == "Before:" and "After:" in lines
    assert "\x1b[" not in text
    # The note column (TP002 on the moved messages) starts at the same cell in every line that has one.
    noted = [line for line in lines if "TP002" in line]
    assert len(noted) == 2 and any(cells(line) != len(line) for line in noted)  # one holds Chinese text
    starts = {cells(line[: line.index("moved")]) for line in noted}
    assert len(starts) == 1, noted
    synthetic = next(line for line in lines if "synthetic" in line)
    assert synthetic.startswith("+ ") and "call_slow_1" in synthetic
    assert all(cells(line) <= 90 for line in lines)


def test_terminal_view_is_coloured_only_when_asked() -> None:
    diff = repaired({"model": "gpt-4o", "messages": INTERRUPTED_CHAT}, "openai-chat")
    assert "\x1b[32m+ " in render(diff, colour=True)
