"""Any JSON at all: ``validate`` answers with violations or a SanitizeError, never a crash."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanitizer._errors import SanitizeError
from sanitizer.validation import PROVIDERS, validate

_KEYS = st.sampled_from(
    [
        "role",
        "content",
        "type",
        "text",
        "id",
        "tool_use_id",
        "input",
        "tool_calls",
        "tool_call_id",
        "function",
        "name",
        "arguments",
        "call_id",
        "parts",
        "functionCall",
        "functionResponse",
        "toolUse",
        "toolResult",
        "toolUseId",
        "status",
        "prefix",
    ]
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from(
        [
            "",
            " ",
            "user",
            "assistant",
            "tool",
            "model",
            "system",
            "tool_use",
            "tool_result",
            "text",
            "function_call",
            "function_call_output",
            "reasoning",
            "server_tool_use",
            "web_search_tool_result",
            "thinking",
            "a",
            "c1",
            "error",
        ]
    ),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)
_BODY = st.dictionaries(
    st.sampled_from(
        ["messages", "input", "contents", "tools", "toolConfig", "thinking", "model", "previous_response_id"]
    ),
    _JSON,
    max_size=4,
)
_TARGETS = st.sampled_from([(api, provider) for api, providers in PROVIDERS.items() for provider in providers])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=_TARGETS, body=_BODY)
def test_validate_never_crashes(target: tuple[str, str], body: dict[str, Any]) -> None:
    api, provider = target
    try:
        violations = validate(body, api=api, provider=provider)
    except SanitizeError:
        return
    for v in violations:
        assert v.status in (400, 404, 500)
        assert v.message
