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


def _seed_anthropic() -> dict[str, Any]:
    """Seed 000 in Anthropic shape: an unanswered call, the framework's recovery text, the user's reply."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": "请调用 slow_tool 完成任务"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "tc_slow_1", "name": "slow_tool", "input": {}}],
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "I noticed that you have interrupted me. What can I do for you?"}],
            },
            {"role": "user", "content": [{"type": "text", "text": "Stop! Just answer 42 instead."}]},
        ],
    }


_SYNTHETIC_TEXT = (
    "Tool call `slow_tool` was interrupted before a result came back. It may have partly run: "
    "check its effects before relying on them or retrying."
)
_TP001 = [{"code": "TP001", "action": "synthesized", "message_index": 1, "tool_call_id": "tc_slow_1"}]


def _merged_forward(*, recovery: bool = True) -> dict[str, Any]:
    """The seed forwarded with the recovery text folded before the call and the user's text merged
    after the synthetic result."""
    body = _seed_anthropic()
    recovery_text = [{"type": "text", "text": body["messages"][2]["content"][0]["text"]}] if recovery else []
    call = body["messages"][1]["content"][0]
    result = {"type": "tool_result", "tool_use_id": "tc_slow_1", "content": _SYNTHETIC_TEXT, "is_error": True}
    return {
        **body,
        "messages": [
            body["messages"][0],
            {"role": "assistant", "content": [*recovery_text, call]},
            {"role": "user", "content": [result, {"type": "text", "text": "Stop! Just answer 42 instead."}]},
        ],
    }


def test_a_user_text_merged_after_a_synthetic_result_is_moved_not_dropped() -> None:
    diff = compare(_seed_anthropic(), _merged_forward(), _TP001, "anthropic-messages")
    user = diff.before[3]
    assert user.marks == (MOVED,) and user.note == "now in #2"
    recovery = diff.before[2]
    assert recovery.marks == (MOVED,) and recovery.note == "now in #1"
    assert not any(DROPPED in row.marks or FOLDED in row.marks for row in diff.before)
    result = diff.after[2]
    assert result.marks == (SYNTHETIC, MOVED) and result.note == "has the text of #3"
    assert result.merged == ("Stop! Just answer 42 instead.",)
    out = render(diff, width=100)
    before, after = out.split("After:")
    assert "dropped" not in out
    line = next(line for line in after.splitlines() if line.startswith("+ #2"))
    assert 'Stop! Just answer 42 instead."' in line and cells(line) <= 100, line
    assert "> #3   user      Stop! Just answer 42 instead." in before


def test_the_golden_tp001_new_turn_text_is_moved_into_the_result_message() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}],
            },
            {"role": "user", "content": "never mind, tell me a joke"},
        ],
    }
    diff = repaired(body, "anthropic-messages")
    assert diff.before[2].marks == (MOVED,) and diff.before[2].note == "now in #2"
    assert "never mind, tell me a joke" in diff.after[2].text


def test_a_text_really_absent_from_the_forwarded_transcript_is_still_dropped() -> None:
    diff = compare(_seed_anthropic(), _merged_forward(recovery=False), _TP001, "anthropic-messages")
    assert diff.before[2].marks == (DROPPED,)
    assert diff.before[3].marks == (MOVED,)
    assert "dropped" in render(diff)


def test_a_message_only_partly_forwarded_is_still_dropped() -> None:
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
    forwarded = {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "c"}]}
    diff = compare(body, forwarded, [], "anthropic-messages")
    assert diff.before[0].marks == (DROPPED,)


def test_a_short_dropped_text_is_not_taken_for_one_moved_inside_a_longer_text() -> None:
    """A text is recognised inside a longer one only when it is long enough not to be there by
    chance: a dropped "ok" is not "moved" into a new message that happens to contain those letters."""
    before = {
        "messages": [
            {"role": "user", "content": "deploy it"},
            {"role": "assistant", "content": "deploying"},
            {"role": "user", "content": "ok"},
        ]
    }
    after = {
        "messages": [
            {"role": "user", "content": "deploy it"},
            {"role": "assistant", "content": "deploying"},
            {"role": "user", "content": "the deploy looks broken"},
        ]
    }
    diff = compare(before, after, [], "openai-chat")
    assert diff.before[2].marks == (DROPPED,)
