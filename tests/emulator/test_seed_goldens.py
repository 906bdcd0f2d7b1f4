"""Every seed report, in both API shapes: the provider's 400 as sent, 200 once `sanitize` repaired it.

The transcripts are the sanitizer's golden seed fixtures, and the repaired version is what
``sanitize`` produces now (not a hand-written copy), so this ties the sanitizer, the validator
and the emulator together through the official SDKs, streaming and not.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from sanitizer import Policy, sanitize
from tests.emulator.conftest import Emulator
from tests.sanitizer.golden_cases import Case, all_cases

SEEDS = [c for c in all_cases() if c.path.parent.name == "seeds"]


def _send(emulator: Emulator, case: Case, body: dict[str, Any], stream: bool) -> str:
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
    error = openai.BadRequestError if case.api == "openai-chat" else anthropic.BadRequestError
    with pytest.raises(error) as rejected:
        _send(emulator, case, case.before, stream)
    assert rejected.value.status_code == 400
    expected = "tool_calls" if case.api == "openai-chat" else "`tool_use` ids were found without `tool_result` blocks"
    assert expected in str(rejected.value)

    repaired = sanitize(case.before, api=case.api, policy=Policy.from_mapping(case.policy))
    assert repaired.repairs
    assert _send(emulator, case, repaired.body, stream)
