"""Bodies a gateway converts before the provider sees them: LiteLLM's Anthropic adapter (an
Anthropic body bound for OpenAI or Mistral) and a Chat-to-Converse gateway (a Chat body bound
for Bedrock). The provider's text is about the converted body; ``message_index`` points into
the body as sent."""

from __future__ import annotations

from sanitizer import sanitize
from sanitizer.validation import validate
from tests._support.builders import aa, anthropic, au, chat, oa, osys, ot, ou, text, tr, tu

THINKING = {"type": "thinking", "thinking": "plan first", "signature": "sig"}


def _found(body: object, api: str, provider: str) -> list[tuple[str, str, int | None]]:
    return [(v.rule, v.message, v.message_index) for v in validate(body, api=api, provider=provider)]


def test_anthropic_for_mistral_results_then_text_become_tool_then_user() -> None:
    # mistralai/mistral-common#169: LiteLLM puts the tool message before the user's text.
    body = anthropic(au("read it"), aa(tu("abcDEF123", "Read")), au(tr("abcDEF123"), text("<system-reminder>")))
    assert _found(body, "anthropic-messages", "mistral") == [
        ("mistral.M3", "Unexpected role 'user' after role 'tool'", 2)
    ]
    # The same turn is fine for Anthropic, and for OpenAI once converted.
    assert _found(body, "anthropic-messages", "anthropic") == []
    assert _found(body, "anthropic-messages", "openai") == []


def test_anthropic_for_openai_prints_the_converted_index_and_points_at_the_sent_message() -> None:
    # The system parameter is message 0 of the Chat body; the unanswered call is Anthropic message 1.
    body = anthropic(au("go"), aa(text("Listing."), tu("toolu_1")), au("never mind"), system="Be brief.")
    found = validate(body, api="anthropic-messages", provider="openai")
    assert [(v.rule, v.message_index) for v in found] == [("openai.O1", 1)]
    assert found[0].message.endswith("did not have response messages: toolu_1")
    assert found[0].body["error"]["type"] == "invalid_request_error"


def test_anthropic_for_openai_thinking_only_turn_is_null_content_and_repaired() -> None:
    body = anthropic(au("plan it"), aa(THINKING), au("go on"))
    assert _found(body, "anthropic-messages", "openai") == [
        ("openai.O6", "Invalid value for 'content': expected a string, got null.", 1)
    ]
    result = sanitize(body, api="anthropic-messages", provider="openai")
    assert [r.code for r in result.repairs] == ["AN017"]
    assert "plan first" in result.repairs[0].detail
    assert validate(result.body, api="anthropic-messages", provider="openai") == []


def test_anthropic_for_mistral_final_assistant_needs_prefix_litellm_cannot_send() -> None:
    body = anthropic(au("answer in JSON"), aa('{"answer":'))
    assert [v.rule for v in validate(body, api="anthropic-messages", provider="mistral")] == ["mistral.M4"]
    repaired = sanitize(body, api="anthropic-messages", provider="mistral").body
    assert validate(repaired, api="anthropic-messages", provider="mistral") == []


def test_chat_for_bedrock_tool_history_without_tools_is_b4() -> None:
    # anomalyco/opencode#10259, through Portkey: tool blocks and no toolConfig.
    body = chat(osys(), ou(), oa("", "call_1"), ot("call_1"), oa("done"), ou("summarise"))
    del body["tools"]
    found = validate(body, api="openai-chat", provider="bedrock")
    assert [(v.rule, v.message_index) for v in found] == [("bedrock.B4", 2)]
    assert found[0].headers == {"x-amzn-ErrorType": "ValidationException"}
    repaired = sanitize(body, api="openai-chat", provider="bedrock").body
    assert validate(repaired, api="openai-chat", provider="bedrock") == []


def test_chat_for_bedrock_user_text_after_results_shares_their_turn() -> None:
    # The gateway merges the tool message and the user's next message into one user turn.
    body = chat(ou(), oa(None, "call_1"), ot("call_1"), ou("stop"))
    assert _found(body, "openai-chat", "bedrock") == [
        (
            "bedrock.B3",
            "messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
            2,
        )
    ]
    repaired = sanitize(body, api="openai-chat", provider="bedrock")
    assert [r.code for r in repaired.repairs] == ["PV002"]
    assert validate(repaired.body, api="openai-chat", provider="bedrock") == []


def test_chat_for_bedrock_starting_on_the_assistant_after_system_is_b8() -> None:
    body = chat(osys(), oa("Here is the plan."), ou("go on"))
    assert [(v.rule, v.message_index) for v in validate(body, api="openai-chat", provider="bedrock")] == [
        ("bedrock.B8", 1)
    ]
    repaired = sanitize(body, api="openai-chat", provider="bedrock")
    assert [r.code for r in repaired.repairs] == ["BR003"]
    assert [m["role"] for m in repaired.body["messages"]] == ["system", "user", "assistant", "user"]
    assert validate(repaired.body, api="openai-chat", provider="bedrock") == []


def test_a_valid_tool_round_passes_every_gateway_view() -> None:
    anthropic_body = anthropic(au("list"), aa(tu("abcDEF123")), au(tr("abcDEF123")), aa("two files"), au("thanks"))
    assert _found(anthropic_body, "anthropic-messages", "openai") == []
    assert _found(anthropic_body, "anthropic-messages", "mistral") == []
    chat_body = chat(osys(), ou(), oa(None, "call_1"), ot("call_1"), oa("done"), ou("thanks"))
    assert _found(chat_body, "openai-chat", "bedrock") == []
