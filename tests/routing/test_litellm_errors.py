"""Errors from providers reached through litellm come back in the client's own format, with the
provider's own message kept and its status mapped to the client's error class."""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import openai
import pytest

from sanitizer import validate
from tests._support.litellm_routes import CLIENT_KEY, GEMINI_KEY, NO_LITELLM, PROVIDERS, Provider
from tests._support.litellm_seeds import (
    CHAT_PROVIDERS,
    TOOLS_CHAT,
    TOOLS_MESSAGES,
    TOOLS_RESPONSES,
    seed_chat,
    seed_messages,
    seed_responses,
)
from tests._support.provider_fakes import FAIL_MESSAGE

pytestmark = [
    NO_LITELLM,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.* the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the .* attribute on the instance is deprecated:DeprecationWarning"),
]

# Errors: in report mode the seed transcript reaches the provider broken, and its own 400 comes
# back in the client's format with the provider's message in it.


@pytest.mark.parametrize("name", CHAT_PROVIDERS)
def test_provider_rejection_reaches_openai_client(
    report_url: str, providers: dict[str, Provider], name: str, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers[name]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_at(report_url).chat.completions.create(model=provider.model, messages=seed_chat(), tools=TOOLS_CHAT)
    assert provider.fake.last.status == 400
    expected = _provider_message(provider)
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict) and body["message"] == expected  # the SDK hands over the error object
    assert caught.value.response.json()["error"]["type"] == "invalid_request_error"


def test_provider_rejection_reaches_anthropic_client(
    report_url: str, providers: dict[str, Provider], anthropic_at: Callable[[str], anthropic.Anthropic]
) -> None:
    provider = providers["compat"]
    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_at(report_url).messages.create(
            model=provider.model, max_tokens=256, messages=seed_messages(), tools=TOOLS_MESSAGES
        )
    assert provider.fake.last.status == 400
    error = caught.value.response.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert error["error"]["message"] == _provider_message(provider)


@pytest.mark.parametrize(
    ("status", "openai_error", "anthropic_error"),
    [
        (401, openai.AuthenticationError, anthropic.AuthenticationError),
        (429, openai.RateLimitError, anthropic.RateLimitError),
        (404, openai.NotFoundError, anthropic.NotFoundError),
    ],
)
def test_provider_status_maps_to_the_clients_error(
    report_url: str,
    providers: dict[str, Provider],
    status: int,
    openai_error: type[openai.APIStatusError],
    anthropic_error: type[anthropic.APIStatusError],
    openai_at: Callable[[str], openai.OpenAI],
    anthropic_at: Callable[[str], anthropic.Anthropic],
) -> None:
    for name in ("mistral", "gemini"):
        with pytest.raises(openai_error) as caught:
            openai_at(report_url).chat.completions.create(
                model=providers[name].model, messages=[{"role": "user", "content": f"FAIL {status}"}]
            )
        assert caught.value.status_code == status
        assert FAIL_MESSAGE in caught.value.response.json()["error"]["message"]
        # One try: Suture does not retry through litellm behind the client's back.
        assert len(providers[name].fake.received) == 1
    with pytest.raises(anthropic_error) as caught_a:
        anthropic_at(report_url).messages.create(
            model=providers["compat"].model, max_tokens=64, messages=[{"role": "user", "content": f"FAIL {status}"}]
        )
    assert caught_a.value.status_code == status
    assert FAIL_MESSAGE in caught_a.value.response.json()["error"]["message"]


def test_stream_errors_come_back_as_json_before_the_stream(
    report_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        openai_at(report_url).chat.completions.create(
            model=providers["bedrock"].model, messages=[{"role": "user", "content": "FAIL 429"}], stream=True
        )
    assert FAIL_MESSAGE in str(caught.value)


def _provider_message(provider: Provider) -> str:
    # What the fake answered: the provider's own error text for this transcript.
    api, rules, _, _ = PROVIDERS[provider.name]
    violations = validate(provider.fake.last.body, api=api, provider=rules)
    return violations[0].message


def test_a_key_the_provider_quotes_is_redacted(
    report_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    client = openai_at(report_url)
    for name, key in (("mistral", CLIENT_KEY), ("gemini", GEMINI_KEY)):
        with pytest.raises(openai.AuthenticationError) as caught:
            client.chat.completions.create(
                model=providers[name].model, messages=[{"role": "user", "content": "FAIL 401"}]
            )
        assert providers[name].fake.last.status == 401
        message = caught.value.response.json()["error"]["message"]
        assert key not in message and "incorrect API key provided: [redacted]" in message


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_provider_rejection_reaches_responses_client(
    report_url: str, providers: dict[str, Provider], stream: bool, openai_at: Callable[[str], openai.OpenAI]
) -> None:
    provider = providers["anthropic"]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_at(report_url).responses.create(
            model=provider.model, input=seed_responses(), tools=TOOLS_RESPONSES, stream=stream
        )
    # Unrepaired (report mode), the orphan call reached Anthropic, whose own 400 comes back.
    assert provider.fake.last.status == 400
    assert caught.value.status_code == 400
    error = caught.value.response.json()["error"]
    assert error["message"] == _provider_message(provider)
    assert "tool_use" in error["message"] and error["type"] == "invalid_request_error"


def test_provider_status_maps_to_the_responses_clients_error(
    report_url: str, providers: dict[str, Provider], openai_at: Callable[[str], openai.OpenAI]
) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        openai_at(report_url).responses.create(model=providers["anthropic"].model, input="FAIL 429")
    assert caught.value.status_code == 429
    assert FAIL_MESSAGE in caught.value.response.json()["error"]["message"]
    assert len(providers["anthropic"].fake.received) == 1


def test_a_gemini_stream_refused_before_its_first_token_is_an_error_status_with_no_key_logged(
    report_url: str,
    providers: dict[str, Provider],
    anthropic_at: Callable[[str], anthropic.Anthropic],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # litellm's Anthropic adapter sends its own message_start before calling Gemini, then turns
    # Gemini's refusal into an error event (and an ERROR log line quoting it, key included).
    with caplog.at_level("INFO"), pytest.raises(anthropic.AuthenticationError) as caught:
        anthropic_at(report_url).messages.create(
            model=providers["gemini"].model,
            max_tokens=64,
            messages=[{"role": "user", "content": "FAIL 401"}],
            stream=True,
        )
    assert providers["gemini"].fake.last.status == 401
    message = caught.value.response.json()["error"]["message"]
    assert FAIL_MESSAGE in message and GEMINI_KEY not in message
    litellm_lines = [r.getMessage() for r in caplog.records if r.name.startswith("LiteLLM")]
    assert any(FAIL_MESSAGE in line for line in litellm_lines), litellm_lines
    assert not any(GEMINI_KEY in line for line in litellm_lines)
    assert all(record.exc_info is None for record in caplog.records if record.name.startswith("LiteLLM"))
