"""Whatever a refusal says, a repair from it never removes what the user typed or what a tool
really returned, and never mutates its input."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanitizer.rejection import repair_rejection
from sanitizer.validation._registry import REGISTRY
from tests._support.transcript_strategies import (
    events,
    real_results,
    to_anthropic,
    to_bedrock,
    to_gemini,
    to_openai,
    to_responses,
    user_texts,
)


def to_openai_parts(evs: list[tuple[Any, ...]]) -> dict[str, Any]:
    """OpenAI Chat with each text as a list of text parts, an empty one among them: the portable
    profile's case."""
    body = to_openai(evs)
    for m in body["messages"]:
        if isinstance(m.get("content"), str):
            m["content"] = [{"type": "text", "text": m["content"]}, {"type": "text", "text": ""}]
    return body


SHAPES = {
    "openai-chat": (to_openai, "messages"),
    "openai-chat-parts": (to_openai_parts, "messages"),
    "anthropic-messages": (to_anthropic, "messages"),
    "openai-responses": (to_responses, "input"),
    "gemini": (to_gemini, "contents"),
    "bedrock-converse": (to_bedrock, "messages"),
}
TEMPLATES = [t for entry in REGISTRY.values() for t in entry.templates]
quick = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ids(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("id", "call_id", "tool_call_id", "tool_use_id", "toolUseId") and isinstance(v, str):
                found.append(v)
            else:
                found += _ids(v)
    elif isinstance(value, list):
        for v in value:
            found += _ids(v)
    return found


@st.composite
def refusals(draw: st.DrawFn, key: str, size: int, ids: list[str]) -> str:
    """A provider's text naming a message, a block, an id, or nothing; known or not."""
    i = draw(st.integers(0, size + 1))
    j = draw(st.integers(0, 3))
    ident = draw(st.sampled_from(ids)) if ids else "call_none"
    shapes = [
        f"{key}.{i}.content.{j}: this block is not allowed here",
        f"Invalid '{key}[{i}]': not allowed.",
        f"Invalid '{key}[{i}].tool_calls[{j}].id': bad.",
        f"* GenerateContentRequest.{key}[{i}].parts[{j}]: bad part.",
        f"{key}.{i}: messages must alternate",
        f"tool call {ident} has a problem",
        f"Item '{ident}' was provided without its required following item.",
        "Expecting value: line 1 column 1 (char 0)",
        "Invalid JSON format in tool call arguments",
        # Names nothing: the portable profile's escalation.
        "The provided messages input is invalid. The error info is [Unexpected item type in content.]",
        "Bad Request",
        f"Invalid '{key}[{i}]'. Image URLs are only allowed for messages with role 'user', but this message with "
        "role 'tool' contains an image URL.",
        # Keys a provider does not accept, the conversation's own among them: those stay.
        f"Extra inputs are not permitted, field: '{key}[{i}].content'",
        f"{key}.{i}.content.{j}.text: Extra inputs are not permitted",
        "*.text: Extra inputs are not permitted",
        f"Unknown parameter: '{key}[{i}].content[{j}].output'.",
        f"Invalid JSON payload received. Unknown name \"text\" at '{key}[{i}].parts[{j}]': Cannot find field.",
        f'{{"type":"extra_forbidden","loc":["body","{key}",{i},"tool_call_id"],"msg":"Extra inputs are not permitted"}}',
        "unknown field `toolUseId`, expected `name`",
        f"{key}[{i}]: invalid type: sequence, expected a string",
        f"Invalid '{key}[{i}].tool_calls[{j}].id': empty string.",
        "Messages can't contain duplicate document names. Rename the document and retry your request.",
        draw(st.text(max_size=40)),
    ]
    template = draw(st.sampled_from(TEMPLATES))
    filled = template.format_map(_Filler(i, j, ident))
    return draw(st.sampled_from([*shapes, filled]))


class _Filler(dict[str, Any]):
    def __init__(self, i: int, j: int, ident: str) -> None:
        super().__init__()
        self.values_ = {"n": i, "m": j, "k": j, "first": 0, "i": i, "j": i + 1, "id": ident, "ids": ident}

    def __missing__(self, key: str) -> Any:
        return self.values_.get(key, "x")


@pytest.mark.parametrize("api", SHAPES)
@quick
@given(evs=events, data=st.data())
def test_no_refusal_makes_a_repair_lose_user_text_or_a_real_result(
    api: str, evs: list[Any], data: st.DataObject
) -> None:
    shape, key = SHAPES[api]
    body = shape(evs)
    pristine = copy.deepcopy(body)
    message = data.draw(refusals(key, len(body[key]), _ids(body[key])))
    status = data.draw(st.sampled_from([400, 404, 422]))
    outcome = repair_rejection(body, api=api.removesuffix("-parts"), status=status, message=message)
    assert body == pristine, "input mutated"
    if outcome.body is None:
        assert not outcome.repairs
        return
    assert outcome.repairs and outcome.body != body
    after_texts = "\n".join(user_texts(outcome.body))
    for text in user_texts(body):
        assert text in after_texts, (message, text)
    after = json.dumps(outcome.body, ensure_ascii=False)
    for result in real_results(body):
        assert json.dumps(result, ensure_ascii=False)[1:-1] in after, (message, result)
