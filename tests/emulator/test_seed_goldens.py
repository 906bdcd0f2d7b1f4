"""Every seed report, in every API shape: the provider's 400 as sent, 200 once `sanitize` repaired it.

The transcripts are the sanitizer's golden seed fixtures, and the repaired version is what
``sanitize`` produces now (not a hand-written copy), so this ties the sanitizer, the validator
and the emulator together through the official SDKs, streaming and not.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from botocore.exceptions import ClientError as BotoClientError
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from sanitizer import Policy, sanitize, validate
from tests._support.emulator import Emulator, bedrock_client
from tests._support.golden_cases import Case, all_cases

SEEDS = [c for c in all_cases() if c.path.parent.name == "seeds"]


# What each SDK raises for the provider's 400.
_REJECTED: dict[str, type[Exception]] = {
    "openai-chat": openai.BadRequestError,
    "openai-responses": openai.BadRequestError,
    "anthropic-messages": anthropic.BadRequestError,
    "gemini": genai_errors.ClientError,
    "bedrock-converse": BotoClientError,
}


def _status(error: Exception) -> int:
    if isinstance(error, BotoClientError):
        status: int = error.response["ResponseMetadata"]["HTTPStatusCode"]
        return status
    if isinstance(error, genai_errors.ClientError):
        return error.code
    assert isinstance(error, openai.APIStatusError | anthropic.APIStatusError)
    return error.status_code


def _send(emulator: Emulator, case: Case, body: dict[str, Any], stream: bool) -> str:
    if case.api == "openai-responses":
        with openai.OpenAI(base_url=emulator.url + "/v1", api_key="sk-test", max_retries=0) as client:
            if stream:
                with client.responses.stream(**body) as events:
                    return events.get_final_response().output_text
            return client.responses.create(**body).output_text
    if case.api == "gemini":
        options = genai_types.HttpOptions(base_url=emulator.url, timeout=10_000)
        config = genai_types.GenerateContentConfig.model_validate(
            {k: v for k, v in body.items() if k in ("systemInstruction", "tools", "toolConfig")}
        )
        with genai.Client(api_key="AIza-test", http_options=options) as gclient:
            args: dict[str, Any] = {"model": "gemini-2.5-flash", "contents": body["contents"], "config": config}
            if stream:
                return "".join(c.text or "" for c in gclient.models.generate_content_stream(**args))
            return gclient.models.generate_content(**args).text or ""
    if case.api == "bedrock-converse":
        bclient = bedrock_client(emulator.url)
        try:
            if stream:
                events = bclient.converse_stream(**body)["stream"]
                return "".join(
                    e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
                )
            reply = bclient.converse(**body)
            return "".join(b.get("text", "") for b in reply["output"]["message"]["content"])
        finally:
            bclient.close()
    if case.api == "openai-chat":
        with openai.OpenAI(base_url=emulator.url + "/v1", api_key="sk-test", max_retries=0) as client:
            if stream:
                chunks = client.chat.completions.create(**body, stream=True)
                return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            reply = client.chat.completions.create(**body)
            return reply.choices[0].message.content or ""
    # The SDK warns about deprecated model names, and warnings are errors here.
    body = {**body, "model": "claude-sonnet-4-6"}
    with anthropic.Anthropic(base_url=emulator.url, api_key="sk-ant-test", max_retries=0) as client:
        if stream:
            with client.messages.stream(**body) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**body)
        return "".join(b.text for b in message.content if b.type == "text")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("case", SEEDS, ids=lambda c: c.path.stem)
def test_seed_is_rejected_as_sent_and_accepted_once_repaired(emulator: Emulator, case: Case, stream: bool) -> None:
    with pytest.raises(_REJECTED[case.api]) as rejected:
        _send(emulator, case, case.before, stream)
    # The provider's first complaint, as the validator words it, is what the SDK reports.
    first = validate(case.before, api=case.api)[0]
    assert _status(rejected.value) == first.status == 400
    assert first.message in str(rejected.value)

    repaired = sanitize(case.before, api=case.api, policy=Policy.from_mapping(case.policy))
    assert repaired.repairs
    assert _send(emulator, case, repaired.body, stream)
