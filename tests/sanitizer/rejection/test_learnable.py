"""The learnable strategies' whole-transcript form (``everywhere``), which the proxy applies before
any refusal to an upstream that once needed the fix: what each changes, that each change is in the
record, that nothing changes where nothing applies, and that a golden fix's lesson does at least
what the fix did."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sanitizer import Policy
from sanitizer.dialects import DIALECTS
from sanitizer.rejection import PORTABLE_PROFILE, STRATEGIES, apply_lessons, repair_rejection
from sanitizer.rejection._strategy import Lesson, Strategy
from sanitizer.rejection._target import Named
from sanitizer.rules import Context

GOLDEN = Path(__file__).parent / "golden"
BY_CODE = {s.code: s for s in (*STRATEGIES, PORTABLE_PROFILE)}


def everywhere(code: str, body: dict[str, Any], api: str, lesson: Lesson | None = None) -> tuple[Any, list[Any], Any]:
    """The strategy's whole-transcript form on ``body``: the body rendered, the repairs, the ids to restore."""
    strategy = BY_CODE[code]
    pristine = copy.deepcopy(body)
    dialect = DIALECTS[api]
    transcript = dialect.parse(body)
    ctx = Context(api, dialect, Policy())
    strategy.everywhere(transcript, ctx, lesson or Lesson(code))
    assert body == pristine, "input mutated"
    return dialect.render(transcript), ctx.repairs, ctx.restore_ids


def test_the_learnable_strategies() -> None:
    assert {s.code for s in (*STRATEGIES, PORTABLE_PROFILE) if s.learnable} == {
        "RJ009",
        "RJ010",
        "RJ011",
        "RJ012",
        "RJ013",
        "RJ014",
        "RJ015",
    }


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_reset_named_arguments_everywhere_resets_every_call_no_server_can_read() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    call("c1", "a", ""),
                    call("c2", "b", None),
                    call("c3", "c", "null"),
                    call("c4", "d", '{"path": "a.py"'),
                    call("c5", "e", '{"ok": true}'),
                    call("c6", "f", "[1]"),
                ],
            },
            *({"role": "tool", "tool_call_id": f"c{n}", "content": "x"} for n in range(1, 7)),
        ],
    }
    after, repairs, _ = everywhere("RJ009", body, "openai-chat")
    arguments = [c["function"]["arguments"] for c in after["messages"][1]["tool_calls"]]
    # Empty, null, "null" and not JSON become {}; JSON (an object, or not one: another rule's) stays.
    assert arguments == ["{}", "{}", "{}", "{}", '{"ok": true}', "[1]"]
    assert [(r.code, r.action, r.tool_call_id) for r in repairs] == [
        ("RJ009", "replaced", f"c{n}") for n in (1, 2, 3, 4)
    ]
    assert '{"path": "a.py"' in repairs[3].detail


def test_reset_named_arguments_everywhere_in_responses_items() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "input": [
            {"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "c1", "name": "a", "arguments": ""},
            {"type": "function_call", "call_id": "c2", "name": "b", "arguments": '{"q": "say "hi""}'},
            {"type": "custom_tool_call", "call_id": "c3", "name": "patch", "input": "*** Begin Patch"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
            {"type": "function_call_output", "call_id": "c2", "output": "y"},
            {"type": "custom_tool_call_output", "call_id": "c3", "output": "z"},
        ],
    }
    after, repairs, _ = everywhere("RJ009", body, "openai-responses")
    assert [i.get("arguments") for i in after["input"][1:3]] == ["{}", "{}"]
    assert after["input"][3] == body["input"][3]
    assert [r.tool_call_id for r in repairs] == ["c1", "c2"]


def tool_with_image(call_id: str, text: str | None) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": text}] if text else []
    content.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{call_id}"}})
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def test_move_named_tool_image_everywhere_moves_each_turns_images_in_order() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Two screenshots and the DOM."},
            {"role": "assistant", "content": None, "tool_calls": [call(f"c{n}", "t", "{}") for n in (1, 2, 3)]},
            tool_with_image("c1", "first"),
            tool_with_image("c2", None),
            {"role": "tool", "tool_call_id": "c3", "content": "<button/>"},
            {"role": "user", "content": "Which is highlighted?"},
        ],
    }
    after, repairs, _ = everywhere("RJ010", body, "openai-chat")
    roles = [m["role"] for m in after["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "user", "user", "user"]
    moved = [m["content"] for m in after["messages"][5:7]]
    assert [c[0]["text"] for c in moved] == [
        "The image(s) the tool call c1 returned:",
        "The image(s) the tool call c2 returned:",
    ]
    assert [c[1]["image_url"]["url"] for c in moved] == ["data:image/png;base64,c1", "data:image/png;base64,c2"]
    assert [(r.action, r.message_index, r.tool_call_id) for r in repairs] == [("moved", 2, "c1"), ("moved", 3, "c2")]


def test_portable_profile_everywhere_is_its_repair_with_nothing_named() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Read a.py"}, {"type": "text", "text": "then b.py"}]},
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [call("functions.read:0", "read", "")],
            },
            {"role": "tool", "tool_call_id": "functions.read:0", "content": "x"},
        ],
    }
    after, repairs, restore = everywhere("RJ011", body, "openai-chat")
    dialect = DIALECTS["openai-chat"]
    transcript = dialect.parse(body)
    ctx = Context("openai-chat", dialect, Policy())
    PORTABLE_PROFILE.repair(transcript, ctx, Named(None, None, [], "anything"))
    assert after == dialect.render(transcript)
    assert (
        [r.action for r in repairs] == [r.action for r in ctx.repairs] == ["joined", "removed", "replaced", "renamed"]
    )
    assert restore == {"functions_read_0": "functions.read:0"}


def test_remove_named_field_everywhere_removes_the_learnt_keys_at_their_level_only() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "hi", "reasoning_content": "a user's key of that name", "metadata": {"a": 1}},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "4", "cache_control": {"type": "ephemeral"}}],
                "reasoning_content": "2+2",
                "tool_calls": [{**call("c1", "f", '{"index": 0}'), "index": 0}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok", "cache_control": {}}]},
        ],
    }
    lesson = Lesson(
        "RJ012", keys=("assistant.reasoning_content", "content[].cache_control", "tool_calls[].index", "*.metadata")
    )
    after, repairs, _ = everywhere("RJ012", body, "openai-chat", lesson)
    user, assistant, tool = after["messages"]
    assert user == {"role": "user", "content": "hi", "reasoning_content": "a user's key of that name"}
    assert assistant == {
        "role": "assistant",
        "content": [{"type": "text", "text": "4"}],
        "tool_calls": [call("c1", "f", '{"index": 0}')],
    }
    assert tool == {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]}
    assert sorted((r.message_index or 0, r.detail.split("'")[1]) for r in repairs) == [
        (0, "metadata"),
        (1, "assistant.reasoning_content"),
        (1, "content[].cache_control"),
        (1, "tool_calls[].index"),
        (2, "content[].cache_control"),
    ]
    assert all("it held:" in r.detail for r in repairs)


def test_remove_named_field_everywhere_in_anthropic_and_responses() -> None:
    anthropic: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Listing."},
                    {"type": "tool_use", "id": "t1", "name": "ls", "input": {"text": "arg"}, "text": "stray"},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]},
        ],
    }
    after, repairs, _ = everywhere(
        "RJ012", anthropic, "anthropic-messages", Lesson("RJ012", keys=("content[].tool_use.text",))
    )
    assert after["messages"][1]["content"] == [
        {"type": "text", "text": "Listing."},
        {"type": "tool_use", "id": "t1", "name": "ls", "input": {"text": "arg"}},
    ]
    assert len(repairs) == 1
    responses: dict[str, Any] = {
        "model": "m",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi", "annotations": []}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "yo", "annotations": []}],
            },
        ],
    }
    after, repairs, _ = everywhere(
        "RJ012", responses, "openai-responses", Lesson("RJ012", keys=("content[].annotations",))
    )
    assert [i["content"] for i in after["input"]] == [
        [{"type": "input_text", "text": "hi"}],
        [{"type": "output_text", "text": "yo"}],
    ]
    assert [r.message_index for r in repairs] == [0, 1]


def test_remove_named_field_everywhere_takes_an_index_of_a_hand_written_lesson_as_any() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a", "x": 1}, {"type": "text", "text": "b", "x": 2}]},
        ]
    }
    after, repairs, _ = everywhere("RJ012", body, "openai-chat", Lesson("RJ012", keys=("content[1].x",)))
    assert after["messages"][0]["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert len(repairs) == 1


def test_flatten_named_content_everywhere_flattens_every_text_only_content() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be terse."}]},
            {
                "role": "user",
                "content": [{"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {"url": "u"}}],
            },
            {"role": "assistant", "content": [], "tool_calls": [call("c1", "f", "{}")]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "user", "content": "plain"},
        ],
    }
    after, repairs, _ = everywhere("RJ013", body, "openai-chat")
    assert [m["content"] for m in after["messages"]] == [
        "Be terse.",
        body["messages"][1]["content"],
        "",
        "a\n\nb",
        "plain",
    ]
    assert after["messages"][2]["tool_calls"] == [call("c1", "f", "{}")]
    assert [(r.action, r.message_index) for r in repairs] == [("joined", 0), ("joined", 2), ("joined", 3)]


def test_flatten_named_content_everywhere_in_anthropic_and_responses() -> None:
    anthropic: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        ],
    }
    after, repairs, _ = everywhere("RJ013", anthropic, "anthropic-messages")
    assert after["messages"][0]["content"] == "a\n\nb"
    assert after["messages"][1:] == anthropic["messages"][1:]
    assert len(repairs) == 1
    responses: dict[str, Any] = {
        "model": "m",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "x"},
        ],
    }
    after, repairs, _ = everywhere("RJ013", responses, "openai-responses")
    assert after["input"][0] == {"role": "user", "content": "a\n\nb"}
    assert after["input"][1:] == responses["input"][1:]
    assert len(repairs) == 1


def test_rename_duplicate_documents_everywhere() -> None:
    def doc(name: str) -> dict[str, Any]:
        return {"document": {"format": "pdf", "name": name, "source": {"bytes": "eA=="}}}

    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [doc("notes"), doc("notes"), {"text": "Compare."}]},
            {"role": "assistant", "content": [{"text": "Done."}]},
            {"role": "user", "content": [doc("NOTES"), {"text": "And this?"}]},
        ]
    }
    after, repairs, _ = everywhere("RJ014", body, "bedrock-converse")
    names = [b["document"]["name"] for m in after["messages"] for b in m["content"] if "document" in b]
    assert names == ["notes", "notes (2)", "NOTES (3)"]
    assert [(r.action, r.message_index) for r in repairs] == [("renamed", 0), ("renamed", 2)]


def test_rename_duplicate_documents_keeps_to_bedrocks_length_and_reads_any_tool_result() -> None:
    long = "a" * 200
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"document": {"format": "txt", "name": long, "source": {}}}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}]},
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "t", "content": ["not a block", {"document": {"name": long}}]}}
                ],
            },
        ]
    }
    after, repairs, _ = everywhere("RJ014", body, "bedrock-converse")
    renamed = after["messages"][2]["content"][0]["toolResult"]["content"]
    assert renamed == ["not a block", {"document": {"name": "a" * 196 + " (2)"}}]
    assert [r.tool_call_id for r in repairs] == ["t"]


@pytest.mark.parametrize("code", ["RJ009", "RJ010", "RJ013", "RJ014", "RJ015"])
def test_everywhere_leaves_a_format_it_is_not_for_alone(code: str) -> None:
    body: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert everywhere(code, body, "gemini") == (body, [], {})


def test_rekey_empty_tool_ids_everywhere_pairs_each_turns_results_in_order() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call("", "a", "{}"), call(" ", "b", "{}")]},
            {"role": "tool", "tool_call_id": "", "content": "A"},
            {"role": "tool", "tool_call_id": " ", "content": "B"},
            {"role": "assistant", "content": None, "tool_calls": [call("", "a", "{}")]},
            {"role": "tool", "tool_call_id": "", "content": "A2"},
            # A result no call with an empty id is left for keeps its own.
            {"role": "tool", "tool_call_id": "", "content": "stray"},
        ],
    }
    after, repairs, restore = everywhere("RJ015", body, "openai-chat")
    messages = after["messages"]
    ids = [c["id"] for c in messages[1]["tool_calls"]] + [messages[4]["tool_calls"][0]["id"]]
    assert len(set(ids)) == 3 and all(i.startswith("call_") and len(i) <= 40 for i in ids)
    assert [messages[n]["tool_call_id"] for n in (2, 3, 5, 6)] == [ids[0], ids[1], ids[2], ""]
    assert restore == {ids[0]: "", ids[1]: " ", ids[2]: ""}
    assert [(r.action, r.message_index) for r in repairs] == [("renamed", 1), ("renamed", 1), ("renamed", 4)]
    # Deterministic: the same transcript, the same ids (a prompt cache stays valid).
    assert everywhere("RJ015", body, "openai-chat")[0] == after


NOTHING_TO_DO = [
    (
        "RJ009",
        "openai-chat",
        {
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [call("c1", "a", "{}")]},
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
            ]
        },
    ),
    (
        "RJ010",
        "openai-chat",
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}]},
    ),
    ("RJ011", "openai-chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}),
    ("RJ012", "openai-chat", {"messages": [{"role": "user", "content": "hi", "name": "bob"}]}),
    (
        "RJ013",
        "openai-chat",
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}]}
            ]
        },
    ),
    (
        "RJ014",
        "bedrock-converse",
        {
            "messages": [
                {"role": "user", "content": [{"document": {"format": "pdf", "name": "a", "source": {}}}, {"text": "x"}]}
            ]
        },
    ),
    ("RJ015", "anthropic-messages", {"messages": [{"role": "user", "content": "hi"}]}),
]


@pytest.mark.parametrize(("code", "api", "body"), NOTHING_TO_DO, ids=[c for c, _, _ in NOTHING_TO_DO])
def test_where_nothing_applies_everywhere_changes_nothing(code: str, api: str, body: dict[str, Any]) -> None:
    lesson = Lesson(code, keys=("cot_id", "*.reasoning_content")) if code == "RJ012" else Lesson(code)
    after, repairs, restore = everywhere(code, body, api, lesson)
    assert (after, repairs, restore) == (body, [], {})
    assert apply_lessons(body, api=api, lessons=(lesson,)).body is body


def test_a_strategy_that_only_fixes_where_a_refusal_points_has_no_lesson() -> None:
    for strategy in STRATEGIES:
        if not strategy.learnable:
            assert strategy.lesson(Named(None, None, [], "")) is None
            with pytest.raises(TypeError):
                strategy.everywhere(None, None, Lesson(strategy.code))  # type: ignore[arg-type]


LEARNT = [p for p in sorted(GOLDEN.glob("RJ*.json")) if BY_CODE[p.name[:5]].learnable]


@pytest.mark.parametrize("path", LEARNT, ids=[p.stem for p in LEARNT])
def test_a_golden_fixs_lesson_does_at_least_what_the_fix_did_and_settles(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    api = case["api"]
    outcome = repair_rejection(
        case["before"], api=api, status=case["status"], message=case["message"], provider=case.get("provider")
    )
    lesson = outcome.lesson
    assert lesson is not None and lesson.fix == path.name[:5]
    assert Lesson.from_dict(json.loads(json.dumps(lesson.as_dict()))) == lesson
    strategy: Strategy = BY_CODE[lesson.fix]
    assert strategy.learnable
    learnt = apply_lessons(case["before"], api=api, lessons=(lesson,), provider=case.get("provider"))
    fixed = Counter((r.code, r.action, r.message_index, r.tool_call_id) for r in outcome.repairs)
    applied = Counter((r.code, r.action, r.message_index, r.tool_call_id) for r in learnt.repairs)
    assert not fixed - applied, "the lesson leaves out what the fix did"
    again = apply_lessons(learnt.body, api=api, lessons=(lesson,), provider=case.get("provider"))
    assert again.repairs == [] and again.body is learnt.body
