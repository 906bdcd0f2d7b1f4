"""Reading the keys a refusal says the provider does not accept (remove-named-field's reading), in
each provider's wording, and telling those of the transcript from the request's own parameters."""

from __future__ import annotations

from typing import Any

import pytest

from sanitizer.rejection import repair_rejection
from sanitizer.rejection._fields import refused_fields, strip, strip_anywhere
from sanitizer.rejection._reading import read
from sanitizer.rejection._target import Named
from sanitizer.rejection.rj012_remove_named_field import RemoveNamedField


@pytest.mark.parametrize(
    ("message", "paths"),
    [
        # Fireworks (microsoft/vscode#335780), one line per key.
        (
            "Extra inputs are not permitted, field: 'messages[2].cot_id', value: 'c1'.\n"
            "Extra inputs are not permitted, field: 'messages[2].cot_summary', value: 's'.",
            [("messages", 2, "cot_id"), ("messages", 2, "cot_summary")],
        ),
        # vLLM's pydantic text (vllm-project/vllm#12864).
        (
            "1 validation error for ChatCompletionRequest\nmessages.0.user.name\n  Extra inputs are not permitted "
            "[type=extra_forbidden, input_value='bob', input_type=str]",
            [("messages", 0, "user", "name")],
        ),
        # A union branch's model class on the way (as sgl-project/sglang#17853 shows pydantic name them).
        (
            "messages.1.ChatCompletionAssistantMessageParam.reasoning_content\n  Extra inputs are not permitted "
            "[type=extra_forbidden, input_value='x', input_type=str]",
            [("messages", 1, "reasoning_content")],
        ),
        # vLLM's loc tuples (vllm-project/vllm#10463): the literal_error is no key.
        (
            "[{'type': 'extra_forbidden', 'loc': ('body', 'messages', 0, 'typed-dict', 'id'), 'msg': 'Extra "
            "inputs are not permitted', 'input': 1}, {'type': 'literal_error', 'loc': ('body', 'messages', 0, "
            "'typed-dict', 'role'), 'msg': \"Input should be 'user'\"}]",
            [("messages", 0, "id")],
        ),
        # Mistral's JSON, escaped once more by a gateway that nests it in its own message.
        (
            '{\\"type\\":\\"extra_forbidden\\",\\"loc\\":[\\"body\\",\\"messages\\",3,\\"assistant\\",'
            '\\"reasoning_content\\"],\\"msg\\":\\"Extra inputs are not permitted\\"}',
            [("messages", 3, "assistant", "reasoning_content")],
        ),
        # A request parameter in Mistral's loc (mistralai/platform-docs-public#7).
        (
            '{"detail":[{"type":"extra_forbidden","loc":["body","frequency_penalty"],"msg":"Extra inputs are not '
            'permitted","input":0.0}]}',
            [("frequency_penalty",)],
        ),
        # mistral-common's own model name before the key (odysseus-dev/odysseus#103).
        (
            "1 validation error for UserMessage metadata Extra inputs are not permitted [type=extra_forbidden, "
            "input_value={'_db_id': '7ce1'}, input_type=dict]",
            [("metadata",)],
        ),
        # Anthropic: the block's type on the way (anthropics/claude-code#4378), anywhere via Vertex.
        (
            "messages.65.content.1.tool_use.text: Extra inputs are not permitted",
            [("messages", 65, "content", 1, "tool_use", "text")],
        ),
        ("*.cache_control: Extra inputs are not permitted", [("*", "cache_control")]),
        # OpenAI (songquanpeng/one-api#1319) and a request parameter of its (osaurus-ai/osaurus#649).
        ("Unknown parameter: 'messages[1].tool_calls[0].index'.", [("messages", 1, "tool_calls", 0, "index")]),
        ("Unknown parameter: 'reasoning'.", [("reasoning",)]),
        # Gemini: the key apart from its holder's path; a top-level one without "at".
        (
            "Invalid JSON payload received. Unknown name \"id\" at 'contents[3].parts[1].function_call': Cannot find "
            "field.",
            [("contents", 3, "parts", 1, "function_call", "id")],
        ),
        ('Invalid JSON payload received. Unknown name "enable_thinking": Cannot find field.', [("enable_thinking",)]),
        # Groq's and Cerebras's (handled by their rules first; read the same way).
        (
            "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' : property 'timestamp' is "
            "unsupported)]",
            [("messages", 0, "timestamp")],
        ),
        (
            "messages.2.assistant.reasoning_content: property 'messages.2.assistant.reasoning_content' is unsupported",
            [("messages", 2, "assistant", "reasoning_content")],
        ),
        # serde's wording, with serde_path_to_error's path or without.
        (
            "messages[1]: unknown field `reasoning_content`, expected one of `role`, `content`",
            [("messages", 1, "reasoning_content")],
        ),
        ("unknown field `cot_id`, expected `role` or `content`", [("cot_id",)]),
        # Azure (quarkiverse/quarkus-langchain4j#285).
        (
            "Unrecognized request arguments supplied: frequencyPenalty, presencePenalty, topP",
            [("frequencyPenalty",), ("presencePenalty",), ("topP",)],
        ),
        # Not an unaccepted key: Gemini's list where an object goes is another defect.
        (
            "Invalid JSON payload received. Unknown name \"response\" at 'contents[2].parts[0].function_response': "
            "Proto field is not repeating, cannot start list.",
            [],
        ),
        ("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`.", []),
    ],
)
def test_each_wording_of_an_unaccepted_key_is_read_as_its_path(message: str, paths: list[tuple[Any, ...]]) -> None:
    assert [f.path for f in refused_fields(message)] == paths


@pytest.mark.parametrize(
    ("message", "keys"),
    [
        ("Extra inputs are not permitted, field: 'messages[2].cot_id', value: 'c'.", ("cot_id",)),
        (
            '{"type":"extra_forbidden","loc":["body","messages",1,"assistant","reasoning_content"]}',
            ("assistant.reasoning_content",),
        ),
        ("messages.65.content.1.tool_use.text: Extra inputs are not permitted", ("content[].tool_use.text",)),
        ("Unknown parameter: 'messages[1].tool_calls[0].index'.", ("tool_calls[].index",)),
        (
            "Unknown name \"id\" at 'contents[1].parts[0].function_call': Cannot find field.\n"
            "Unknown name \"id\" at 'contents[2].parts[0].function_response': Cannot find field.",
            ("parts[].function_call.id", "parts[].function_response.id"),
        ),
        ("unknown field `reasoning_content`, expected one of `role`", ("*.reasoning_content",)),
        ("*.cache_control: Extra inputs are not permitted", ("*.cache_control",)),
        ("system.1.cache_control.ephemeral.scope: Extra inputs are not permitted", None),
    ],
)
def test_the_lesson_of_a_refused_key_is_its_path_from_a_message(message: str, keys: tuple[str, ...] | None) -> None:
    lesson = RemoveNamedField().lesson(Named(None, None, [], message))
    assert (lesson.keys if lesson is not None else None) == keys
    if lesson is not None:
        assert lesson.fix == "RJ012"


CHAT = {
    "model": "m",
    "stream_options": {"include_usage": True},
    "messages": [
        {"role": "user", "content": "hi", "metadata": {"id": 1}},
        {"role": "assistant", "content": "hello"},
    ],
}


@pytest.mark.parametrize(
    ("message", "about", "why"),
    [
        # A request parameter, by each wording: not the transcript's, and not escalated.
        ("Extra inputs are not permitted, field: 'stream_options'", False, "outside the transcript"),
        ("Unknown parameter: 'stream_options'.", False, "outside the transcript"),
        ("Unrecognized request argument supplied: stream_options", False, "outside the transcript"),
        ('{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs"}', False, "outside"),
        # A key the body holds nowhere (Bedrock's guardrails, BerriAI/litellm#13825): not the transcript's.
        ("The model returned the following errors: guardrails: Extra inputs are not permitted", False, "outside"),
        ("system.1.cache_control.ephemeral.scope: Extra inputs are not permitted", False, "outside"),
        # A message's key, named alone or by a path _location does not read.
        ("1 validation error for UserMessage metadata Extra inputs are not permitted", True, ""),
        ("[{'type': 'extra_forbidden', 'loc': ('body', 'messages', 0, 'metadata'), 'msg': 'x'}]", True, ""),
        # Words that are a parameter's name elsewhere ('metadata') do not make a message's key one.
        ('{"type":"extra_forbidden","loc":["body","messages",0,"user","metadata"]}', True, ""),
    ],
)
def test_an_unaccepted_key_is_the_transcripts_only_where_the_transcript_holds_it(
    message: str, about: bool, why: str
) -> None:
    reading = read(CHAT, "openai-chat", 400, message)
    assert reading.about_transcript is about
    assert why in reading.why
    assert not reading.vague or about


def test_a_refused_request_parameter_is_not_escalated_to_the_portable_profile() -> None:
    body = {**CHAT, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    outcome = repair_rejection(body, api="openai-chat", status=400, message="Unknown parameter: 'stream_options'.")
    assert outcome.body is None
    assert "outside the transcript" in outcome.why


@pytest.mark.parametrize(
    ("node", "steps", "key", "after"),
    [
        # A role or a type on the way matches only objects of that role or type.
        ({"role": "user", "name": "bob"}, ("assistant",), "name", None),
        ({"role": "assistant", "x": 1}, ("assistant",), "x", {"role": "assistant"}),
        ({"type": "tool_use", "id": "t", "name": "n", "input": {}, "text": "x"}, ("tool_use",), "text", "drop"),
        # A key of the same name as the type leads into the object it holds (OpenAI's image_url.detail).
        ({"type": "image_url", "image_url": {"url": "u", "detail": "low"}}, ("image_url",), "detail", "nested"),
        # What carries the conversation stays, whatever the path.
        ({"type": "text", "text": "words"}, (), "text", None),
        ({"role": "tool", "tool_call_id": "c", "content": "x"}, (), "tool_call_id", None),
        ({"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}, (), "id", None),
        ({"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}, ("function",), "name", None),
        ({"type": "tool_use", "id": "t", "name": "f", "input": {"k": 1}}, ("input",), "k", None),
        # Gemini's proto path in snake_case reaches the body's camelCase.
        ({"functionCall": {"id": "c", "name": "f", "args": {}}}, ("function_call",), "id", "gemini"),
    ],
)
def test_strip_takes_out_only_what_the_path_leads_to(
    node: dict[str, Any], steps: tuple[Any, ...], key: str, after: Any
) -> None:
    new, removed = strip(node, steps, key)
    if after is None:
        assert (new, removed) == (node, [])
        return
    assert removed
    assert new is not node
    if after == "drop":
        assert new == {"type": "tool_use", "id": "t", "name": "n", "input": {}}
    elif after == "nested":
        assert new == {"type": "image_url", "image_url": {"url": "u"}}
    elif after == "gemini":
        assert new == {"functionCall": {"name": "f", "args": {}}}
    else:
        assert new == after


def test_strip_anywhere_never_enters_a_tools_own_data() -> None:
    node = {
        "role": "user",
        "cache_control": 1,
        "content": [
            {"type": "text", "text": "a", "cache_control": 2},
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "b", "cache_control": 3}]},
            {"type": "tool_use", "id": "t", "name": "f", "input": {"cache_control": "the tool's"}},
        ],
    }
    new, removed = strip_anywhere(node, "cache_control")
    assert sorted(removed) == [1, 2, 3]
    assert new["content"][2]["input"] == {"cache_control": "the tool's"}
    assert node["cache_control"] == 1, "input mutated"


@pytest.mark.parametrize(
    ("node", "steps"),
    [
        ("a string", ("content",)),
        ({"content": "a string"}, ("content", None)),
        ({"role": "user"}, (0,)),
        (["a list where an object goes"], ()),
    ],
)
def test_strip_leaves_what_the_path_does_not_lead_to(node: Any, steps: tuple[Any, ...]) -> None:
    assert strip(node, steps, "x") == (node, [])


def test_strip_anywhere_leaves_what_holds_no_object() -> None:
    assert strip_anywhere("text", "x") == ("text", [])
    assert strip_anywhere([1, "a"], "x") == ([1, "a"], [])
