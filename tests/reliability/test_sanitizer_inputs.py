"""Whatever a client sends, ``sanitize`` returns a result or raises ``SanitizeError``, and
``validate`` returns violations or raises ``SanitizeError``: never another exception, never a
mutated input, never a loop. Checked for every API in ``sanitizer.APIS`` (new formats join
automatically) on arbitrary JSON and on golden transcripts damaged at random."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanitizer import APIS, PROVIDERS, SanitizeError, SanitizeResult, sanitize, validate
from tests._support.golden_cases import all_cases
from tests._support.transcript_strategies import to_anthropic, to_openai

# Every key a dialect branches on, so generated bodies reach past the first shape check.
_KEYS = st.sampled_from(
    [
        "messages",
        "role",
        "content",
        "type",
        "text",
        "id",
        "name",
        "tool_calls",
        "tool_call_id",
        "function",
        "arguments",
        "tool_use_id",
        "input",
        "tools",
        "tool_choice",
        "is_error",
        "thinking",
        "signature",
        "contents",
        "parts",
        "functionCall",
        "functionResponse",
        "args",
        "response",
        "toolUse",
        "toolUseId",
        "toolResult",
        "call_id",
        "output",
        "status",
        "system",
        "model",
        "stream",
        "cache_control",
        "source",
    ]
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(
        [
            "user",
            "assistant",
            "tool",
            "model",
            "system",
            "developer",
            "function",
            "tool_use",
            "tool_result",
            "text",
            "thinking",
            "server_tool_use",
            "function_call",
            "function_call_output",
            "message",
            "call_1",
            "functions.ls:0",
            "",
            " ",
        ]
    ),
)
JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS | st.text(max_size=4), inner, max_size=6),
    max_leaves=25,
)
BODIES = st.one_of(JSON, st.dictionaries(_KEYS, JSON, max_size=5))
CASES = all_cases()
# Derandomized: the same examples on every run, so a shared CI never fails by chance; open-ended
# exploration is bench/fuzz_sanitize.py's job.
quick = settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _check_sanitize(body: Any, api: str) -> SanitizeResult | None:
    pristine = copy.deepcopy(body)
    try:
        result = sanitize(body, api=api)
    except SanitizeError:
        result = None
    assert body == pristine, "sanitize mutated its input"
    if result is not None:
        assert isinstance(result, SanitizeResult)
        assert isinstance(result.body, dict)
        orjson.dumps(result.body)  # the proxy re-serialises a repaired body
    return result


def _check_validate(body: Any) -> None:
    pristine = copy.deepcopy(body)
    for api, providers in PROVIDERS.items():
        for provider in providers:
            try:
                violations = validate(body, api=api, provider=provider)
            except SanitizeError:
                continue
            assert all(v.message and v.status >= 400 for v in violations)
    assert body == pristine, "validate mutated its input"


@pytest.mark.parametrize("api", APIS)
@quick
@given(body=BODIES)
def test_any_json_is_repaired_or_a_sanitize_error(api: str, body: Any) -> None:
    _check_sanitize(body, api)


@quick
@given(body=BODIES)
def test_any_json_is_validated_or_a_sanitize_error(body: Any) -> None:
    _check_validate(body)


@st.composite
def damaged(draw: st.DrawFn, api: str) -> Any:
    """A golden 'before' body of ``api`` with one to four random nodes replaced, dropped or doubled."""
    cases = [c for c in CASES if c.api == api]
    body: Any = copy.deepcopy(draw(st.sampled_from(cases)).before) if cases else {}
    for _ in range(draw(st.integers(1, 4))):
        node, path = body, []
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else range(len(node))))
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        action = draw(st.sampled_from(["replace", "drop", "double"]))
        if action == "replace":
            parent[key] = draw(JSON)
        elif action == "drop":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
    return body


@pytest.mark.parametrize("api", APIS)
@quick
@given(data=st.data())
def test_damaged_transcripts_are_repaired_or_a_sanitize_error(api: str, data: st.DataObject) -> None:
    body = data.draw(damaged(api))
    result = _check_sanitize(body, api)
    _check_validate(body)
    if result is not None and result.repairs:
        # Repairs settle: what Suture forwards needs nothing more on a second pass.
        assert sanitize(result.body, api=api).repairs == []


def _long_events(n: int) -> list[tuple[Any, ...]]:
    """``n`` events of agent turns, every fourth call left unanswered, with interruptions."""
    events: list[tuple[Any, ...]] = [("user", "do the task")]
    turn = 0
    while len(events) < n:
        call = f"call_{turn}"
        events += [("calls", [call], turn % 3 == 0)]
        if turn % 4:
            events += [("result", call, "out-1")]
        else:
            events += [("assistant", "I noticed that you have interrupted me."), ("user", "go on")]
        events += [("assistant", "ok"), ("user", "next")]
        turn += 1
    return events[:n]


@pytest.mark.parametrize(("api", "shape"), [("openai-chat", to_openai), ("anthropic-messages", to_anthropic)])
def test_a_10000_message_broken_transcript_finishes(api: str, shape: Any) -> None:
    # No clock: a quadratic pass over 10,000 messages would make this test crawl, visibly.
    body = shape(_long_events(10_000))
    assert len(body["messages"]) >= 9_000
    result = sanitize(body, api=api)
    assert len([r for r in result.repairs if r.code == "TP001"]) >= 500
    assert validate(result.body, api=api) == []
    assert sanitize(result.body, api=api).repairs == []


@pytest.mark.parametrize("api", APIS)
def test_10000_junk_messages_finish_for_every_api(api: str) -> None:
    junk = [{"role": "user", "content": "x"}, {"role": "model", "parts": [{"text": "y"}]}] * 5_000
    for key in ("messages", "contents", "input"):
        _check_sanitize({key: junk, "model": "m"}, api)


def test_the_fuzzers_findings_stay_fixed() -> None:
    # Reproducers from bench/fuzz_sanitize.py: hashing a non-string role, id or block type raised
    # TypeError in the clean-transcript fast paths; a tool whose function is a string crashed validate.
    for body, api in [
        ({"messages": [{"role": {}}]}, "openai-chat"),
        ({"messages": [{"role": "tool", "tool_call_id": []}]}, "openai-chat"),
        ({"messages": [{"role": "user", "content": [{"type": {}}]}]}, "anthropic-messages"),
        ({"messages": [{"role": "assistant", "content": [{"type": 1}]}]}, "anthropic-messages"),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": {}}]}]},
            "anthropic-messages",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "server_tool_use", "id": {}}]},
                    {"role": "user", "content": "x"},
                ]
            },
            "anthropic-messages",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"type": "x_tool_result", "tool_use_id": []}]}]},
            "anthropic-messages",
        ),
    ]:
        _check_sanitize(body, api)
    validate(
        {"messages": [{"role": "user", "content": "hi"}], "tools": [{"function": "s"}]},
        api="openai-chat",
        provider="anthropic-openai-compat",
    )
