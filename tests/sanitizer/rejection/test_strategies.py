"""Repair from a refusal, in the core: each strategy on the refusal that names its case (golden
before/after, one file per case under ``golden/``), the rules a known refusal's code names, and
the refusals left alone."""

from __future__ import annotations

import copy
import inspect
import json
import os
from pathlib import Path
from typing import Any

import pytest

from sanitizer import Policy
from sanitizer.rejection import PORTABLE_PROFILE, STRATEGIES, refusal_message, repair_rejection
from sanitizer.rules import RULES
from sanitizer.rules._base import DOC_HEADINGS

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.json"))
# REWRITE_GOLDEN=1 rewrites each case's "after" and "repairs" from the code (review the diff).
_REWRITE = os.environ.get("REWRITE_GOLDEN") == "1"


def _load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_golden(path: Path) -> None:
    case = _load(path)
    before = case["before"]
    pristine = copy.deepcopy(before)
    policy = Policy(**case.get("policy", {}))
    outcome = repair_rejection(
        before,
        api=case["api"],
        status=case.get("status", 400),
        message=case["message"],
        provider=case.get("provider"),
        policy=policy,
    )
    assert before == pristine, "input mutated"
    repairs = [[r.code, r.action, r.message_index, r.tool_call_id] for r in outcome.repairs]
    if _REWRITE:
        case.update(after=outcome.body, strategy=outcome.strategy, repairs=repairs, why=outcome.why)
        path.write_text(json.dumps(case, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert outcome.body == case["after"], outcome.why
    assert outcome.strategy == case["strategy"]
    assert repairs == case["repairs"]
    if case["after"] is None:
        assert case["why"] in outcome.why


def test_every_strategy_has_a_case_that_fires_and_one_that_does_not() -> None:
    fired = {_load(p)["strategy"] for p in CASES}
    assert {s.name for s in (*STRATEGIES, PORTABLE_PROFILE)} <= fired
    assert None in fired and "rules" in fired


def test_strategies_are_documented_rules_with_codes_of_their_own() -> None:
    codes = [s.code for s in (*STRATEGIES, PORTABLE_PROFILE)]
    assert len(set(codes)) == len(codes)
    assert not set(codes) & {r.code for r in RULES}
    for strategy in (*STRATEGIES, PORTABLE_PROFILE):
        doc = inspect.cleandoc(type(strategy).__doc__ or "")
        assert [h for h in DOC_HEADINGS if f"{h}:" in doc] == list(DOC_HEADINGS), strategy.code
        assert strategy.name and strategy.code.startswith("RJ")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"error": {"message": "messages.1: bad", "type": "invalid_request_error"}}, "messages.1: bad"),
        ({"message": "Expected toolResult blocks"}, "Expected toolResult blocks"),
        # Together (mozilla-ai/any-llm#714) and SGLang: top-level, beside a type of their own.
        ({"message": "Input validation error", "type_": "invalid_request_error"}, "Input validation error"),
        (
            {"object": "error", "message": "Message has tool role", "type": "BadRequest", "code": 400},
            "Message has tool role",
        ),
        ([{"error": {"code": 400, "message": "contents[1]: bad"}}], "contents[1]: bad"),
        ({"error": "plain"}, "plain"),
        ({"detail": "Conversation roles must alternate"}, "Conversation roles must alternate"),
        ({"nothing": 1}, None),
        ("text", None),
    ],
)
def test_the_refusal_message_is_found_in_each_providers_envelope(payload: Any, message: str | None) -> None:
    assert refusal_message(payload) == message


CHAT = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "user", "content": "Hi."},
        {"role": "user", "content": "Are you there?"},
    ],
}


@pytest.mark.parametrize(
    ("status", "message", "why"),
    [
        (400, "This model's maximum context length is 128000 tokens in messages[1].", "context length"),
        (400, "prompt is too long: 210000 tokens > 200000 maximum", "prompt is too long"),
        (400, "The model `gpt-9` does not exist or you do not have access to it.", "does not exist"),
        (400, "Incorrect API key provided: sk-abc. messages[1]", "api key"),
        (400, "Your request was rejected as a result of our safety system. messages[1]", "safety"),
        (400, "Invalid 'temperature': decimal above maximum value.", "outside the transcript"),
        (400, "Invalid 'messages[7].content': too long.", "does not have"),
        (400, "Something went wrong.", "names no location"),
        (404, "Not found: messages[1]", "names no item"),
        (401, "messages[1] is wrong", "status 401"),
        (429, "messages[1] is wrong", "status 429"),
        (500, "messages[1] is wrong", "status 500"),
    ],
)
def test_refusals_about_something_else_are_left_alone(status: int, message: str, why: str) -> None:
    outcome = repair_rejection(CHAT, api="openai-chat", status=status, message=message)
    assert outcome.body is None
    assert why in outcome.why


def test_a_named_user_text_is_never_dropped() -> None:
    # The provider names a user's text block: no strategy removes what the user wrote.
    body = {
        "model": "claude",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Keep me."}]}],
    }
    outcome = repair_rejection(body, api="anthropic-messages", status=400, message="messages.0.content.0: nope")
    assert outcome.body is None


@pytest.mark.parametrize(
    "message",
    [
        # The wording most reports quote, and the validator's (n8n-io/n8n#22550).
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` "
        "is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
        "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. "
        "To avoid this requirement, disable `thinking`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
        # The same check answered without the parenthesis (NoeFabris/opencode-antigravity-auth#50).
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` "
        "is enabled, a final `assistant` message must start with a thinking block. We recommend you include "
        "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    ],
    ids=["with-parenthesis", "without"],
)
def test_a_refusal_in_either_wording_of_a_check_is_read_as_its_code(message: str) -> None:
    from sanitizer.rejection._reading import read

    body = {
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        ],
    }
    assert read(body, "anthropic-messages", 400, message).codes == ("anthropic.A13",)


PORTABLE_CASES = [p for p in CASES if _load(p)["strategy"] == PORTABLE_PROFILE.name]


@pytest.mark.parametrize("path", PORTABLE_CASES, ids=[p.stem for p in PORTABLE_CASES])
def test_the_portable_profile_settles_and_is_given_once(path: Path) -> None:
    case = _load(path)
    common = {
        "api": case["api"],
        "status": case["status"],
        "message": case["message"],
        "provider": case.get("provider"),
    }
    # Its own output is portable: the same refusal of it again is relayed.
    again = repair_rejection(case["after"], **common)
    assert again.body is None
    # The caller's once per request: no second escalation.
    assert repair_rejection(case["before"], escalate=False, **common).body is None
