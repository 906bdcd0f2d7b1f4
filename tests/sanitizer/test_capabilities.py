"""The capability table (``sanitizer.capabilities``) and the one capability it holds so far: a
system message inside an Anthropic body's ``messages`` (issue 38).

The table names models however providers and gateways spell them, gives an unknown or future
model its provider's newest documented behaviour, and lets a request's betas speak only where no
model is named. Rules read it from their context; the validator agrees with them; the fast path
lets a Claude Code request on Claude Opus 4.8 through without the full pass, and repairs exactly
what the full pass repairs otherwise; a provider's refusal overrules the table.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from sanitizer import Capabilities, looks_clean, model_capabilities, sanitize, validate
from sanitizer.capabilities import TABLE, model_key
from sanitizer.dialects import DIALECTS
from sanitizer.providers import ACCEPTED
from sanitizer.rejection import repair_rejection

BETA = "mid-conversation-system-2026-04-07"
API = "anthropic-messages"


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("claude-opus-4-8", "claude-opus-4-8"),
        ("claude-opus-4-8-20260528", "claude-opus-4-8"),
        ("us.anthropic.claude-opus-4-8-v1:0", "claude-opus-4-8"),
        ("global.anthropic.claude-opus-4-8-v1", "claude-opus-4-8"),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-4-8-v1:0",
            "claude-opus-4-8",
        ),
        ("claude-opus-4-8@20260301", "claude-opus-4-8"),
        ("anthropic/claude-opus-4.8", "claude-opus-4-8"),
        ("claude-opus-4-8[1m]", "claude-opus-4-8"),
        ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
        ("anthropic.claude-v2:1", "claude-v2:1"),
    ],
)
def test_a_model_is_read_however_it_is_spelled(model: str, key: str) -> None:
    assert model_key(model) == key


@pytest.mark.parametrize(
    ("model", "takes"),
    [
        ("claude-opus-4-8", True),
        ("us.anthropic.claude-opus-4-8-v1:0", True),
        ("claude-opus-4-8@20260301", True),
        ("claude-opus-5", True),
        ("claude-opus-5-5", True),
        ("claude-sonnet-5", True),
        ("claude-sonnet-5-5", True),
        ("claude-haiku-5-5", True),
        ("claude-fable-5-1", True),
        ("claude-mythos-5", True),
        # Unknown and future models: the newest documented behaviour.
        ("claude-opus-6", True),
        ("claude-opus-4-9", True),
        ("a-gateway-alias", True),
        # Every model before Opus 4.8.
        ("claude-opus-4-7", False),
        ("claude-opus-4-7-fast", False),
        ("claude-opus-4-6", False),
        ("claude-opus-4-1-20250805", False),
        ("claude-opus-4-20250514", False),
        ("claude-sonnet-4-6", False),
        ("claude-sonnet-4-5", False),
        ("claude-sonnet-4-20250514", False),
        ("claude-haiku-4-5", False),
        ("claude-mythos-preview", False),
        ("claude-3-7-sonnet-latest", False),
        ("claude-3-5-haiku-20241022", False),
        ("claude-2.1", False),
        ("anthropic.claude-v2:1", False),
        ("anthropic.claude-instant-v1", False),
    ],
)
def test_which_claude_models_take_a_system_message_inside_messages(model: str, takes: bool) -> None:
    assert model_capabilities("anthropic", model).mid_conversation_system is takes


@pytest.mark.parametrize("model", ["us.anthropic.claude-opus-4-8-v1:0", "claude-opus-4-8@20260301", "claude-opus-6"])
@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
def test_bedrock_and_vertex_take_none_whatever_the_model(provider: str, model: str) -> None:
    assert model_capabilities(provider, model, [BETA]) == Capabilities()


def test_every_provider_ends_on_a_row_for_unknown_and_future_models() -> None:
    for provider, rows in TABLE.items():
        assert rows[-1].pattern == ".*", provider
        assert "unknown or future model" in rows[-1].source, provider
        assert all(row.source for row in rows), provider


def test_betas_speak_only_where_no_model_is_named() -> None:
    assert model_capabilities("anthropic", None, [BETA]).mid_conversation_system
    assert not model_capabilities("anthropic", None, ["claude-code-20250219"]).mid_conversation_system
    assert not model_capabilities("anthropic", None).mid_conversation_system
    # The model decides: Anthropic refused Claude Code's system message on Opus 4.7, betas and all.
    assert not model_capabilities("anthropic", "claude-opus-4-7", [BETA]).mid_conversation_system
    # A declaration grants nothing no row of the provider does.
    assert model_capabilities("bedrock", None, [BETA]) == Capabilities()
    assert model_capabilities("deepseek", None, [BETA]) == Capabilities()


def _claude_code(model: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "max_tokens": 64,
        "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Run the tests."}]},
            {"role": "system", "content": [{"type": "text", "text": "Available agent types: ..."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
            {"role": "system", "content": "Also update the changelog."},
        ],
    }
    if model is not None:
        body["model"] = model
    return body


def test_a_claude_code_request_on_opus_4_8_skips_the_full_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _claude_code("claude-opus-4-8")
    # The quick look decides alone: the full pass would parse the body.
    monkeypatch.setattr(type(DIALECTS[API]), "parse", lambda self, body: pytest.fail("the full pass ran"))
    assert looks_clean(body, api=API)
    assert sanitize(body, api=API).body is body
    assert sanitize(_claude_code(None), api=API, betas=[BETA]).repairs == []


def test_a_beta_given_as_one_string_is_one_beta() -> None:
    assert sanitize(_claude_code(None), api=API, betas=BETA).repairs == []
    assert validate(_claude_code(None), api=API, betas=BETA) == []


MODELS = (None, "claude-opus-4-8", "claude-sonnet-4-5", "claude-opus-6", "us.anthropic.claude-opus-4-8-v1:0")
BETAS: tuple[tuple[str, ...], ...] = ((), (BETA,), ("claude-code-20250219",))


def _bodies() -> list[Any]:
    u, a = {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"}
    s, blank = {"role": "system", "content": "Be brief."}, {"role": "system", "content": " "}
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]}
    server = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []},
        ],
    }
    shapes = [
        [s, u],
        [u, s],
        [u, s, a, u],
        [u, s, s, a, u],
        [u, blank, s],
        [u, a, s, u],
        [u, s, u],
        [u, call, s, result],
        [u, call, result, s],
        [u, server, s],
        [u, a, s],
        [u, {"role": "user", "content": ""}, s, a, u],
        [u, {"role": "system", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]}, a],
    ]
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    return [{"max_tokens": 8, "tools": tools, "messages": copy.deepcopy(m)} for m in shapes]


@pytest.mark.parametrize("body", _bodies(), ids=lambda b: "-".join(m["role"][0] for m in b["messages"]))
def test_the_quick_look_and_the_validator_agree_with_the_full_pass(body: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for provider in ACCEPTED[API]:
        for model in MODELS:
            for betas in BETAS:
                kw: dict[str, Any] = {"api": API, "provider": provider, "model": model, "betas": betas}
                quick = sanitize(copy.deepcopy(body), **kw)
                with monkeypatch.context() as m:
                    m.setattr(type(DIALECTS[API]), "suspects", lambda self, body: None)
                    full = sanitize(copy.deepcopy(body), **kw)
                assert [r.code for r in quick.repairs] == [r.code for r in full.repairs], kw
                assert quick.body == full.body, kw
                if provider not in ("anthropic", "bedrock", "vertex"):
                    continue
                # What the rules leave is valid for the same model and betas, and settles.
                assert validate(full.body, **kw) == [], kw
                assert sanitize(full.body, **kw).repairs == [], kw
                # The validator reports a system message exactly where system-role-message moves one.
                flagged = {v.message_index for v in validate(body, **kw) if "system" in v.rule}
                moved = {r.message_index for r in full.repairs if r.code == "AN014" and r.action == "moved"}
                assert bool(flagged) == bool(moved), kw


def test_a_refusal_overrules_the_table() -> None:
    """Where the table says a model takes a system message and the provider refuses it anyway,
    the repair from the refusal moves it (the proxy retries once with it)."""
    body = _claude_code("claude-opus-4-8")
    assert sanitize(body, api=API).repairs == []
    repaired = repair_rejection(body, api=API, status=400, message="role 'system' is not supported on this model")
    assert repaired.body is not None
    assert [m["role"] for m in repaired.body["messages"]] == ["user", "assistant", "user"]
    assert [r.code for r in repaired.repairs] == ["AN014", "AN014"]
