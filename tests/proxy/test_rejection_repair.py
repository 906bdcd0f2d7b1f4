"""Repair from the provider's own refusal, through a running Suture: the strict emulator enforces
rules Suture's sanitizer does not know (``ExtraRule``: realistic texts naming a location or an
id), and the client, an official SDK, still gets its answer: Suture reads the refusal, repairs
what it names and sends once more. Refusals about anything else reach the client unchanged,
after exactly one upstream request."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import boto3
import httpx
import openai
import pytest
from botocore.config import Config
from google import genai
from google.genai import types as genai_types

from proxy.emulator import EmulatorConfig, build_emulator_app
from proxy.emulator.extra_rules import ExtraRule
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_server

KEY = "sk-client-canary-0123456789"
CLIENT_KEY = "suture-client-canary-0123456789"
THINKING_REFUSED = "`thinking` blocks from earlier turns cannot be replayed to this model; remove them"

EXTRA_RULES = (
    ExtraRule(
        api="anthropic-messages",
        block_type="thinking",
        role="assistant",
        message="messages.{n}.content.{m}: " + THINKING_REFUSED,
    ),
    ExtraRule(
        api="openai-chat",
        same_role_runs=True,
        message="Invalid 'messages[{n}]': messages with role '{role}' must alternate with another role.",
    ),
    ExtraRule(
        api="openai-responses",
        block_type="web_search_call",
        message="Item '{id}' of type 'web_search_call' is not accepted as input by this deployment.",
    ),
    # The conversation store holds the turn's calls: a call item sent again with its id is a duplicate.
    ExtraRule(
        api="openai-responses",
        block_type="function_call",
        message="Duplicate item found with id {id}. Remove duplicate items from your input and try again.",
    ),
    ExtraRule(
        api="gemini",
        block_type="thought",
        role="model",
        message="* GenerateContentRequest.contents[{n}].parts[{m}].thought: thought parts cannot be sent back.\n",
    ),
    ExtraRule(
        api="bedrock-converse",
        block_type="reasoningContent",
        role="assistant",
        message="messages.{n}.content.{m}: reasoningContent blocks are not accepted in the history of this model.",
    ),
    # Controls: refusals a repair cannot help.
    ExtraRule(
        api="openai-chat",
        message_text="CONTEXT-OVERFLOW",
        message="This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130412 tokens. Please reduce the length of the messages.",
    ),
    ExtraRule(
        api="openai-chat",
        message_text="UNKNOWN-MODEL",
        message="The model `gpt-9-turbo` does not exist or you do not have access to it.",
    ),
    ExtraRule(api="openai-chat", message_text="NAMES-NOWHERE", message="Invalid 'messages[9].content': not allowed."),
    ExtraRule(
        api="anthropic-messages",
        message_text="TOOLS-PARAM",
        message="tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
    ),
)


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def requests(self) -> list[dict[str, Any]]:
        return recorded_requests(self.record)

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.suture + "/v1", api_key=KEY, max_retries=0, timeout=10)

    def anthropic(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.suture, api_key=KEY, max_retries=0, timeout=10)


@contextlib.contextmanager
def stack(tmp_path: Path, **settings: Any) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record, extra_rules=EXTRA_RULES))
    with running_server(app, timeout_graceful_shutdown=1) as emu:
        sections = {
            "openai": {"upstream": emu + "/v1", **settings.pop("openai", {})},
            "anthropic": {"upstream": emu, **settings.pop("anthropic", {})},
            "gemini": {"upstream": emu},
            "bedrock": {"upstream": emu, "enabled": True, "client_api_key": CLIENT_KEY},
        }
        with suture(**sections, **settings) as url:
            yield Stack(emu, record, url)


@pytest.fixture(autouse=True)
def _aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSUTURE0000000000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "suture-aws-secret")


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Stack]:
    with stack(tmp_path, capture={"dir": str(tmp_path / "captures")}) as s:
        yield s


def _statuses(stack: Stack) -> list[int]:
    return [r["status"] for r in stack.requests()]


# --- the five formats ---------------------------------------------------------------------------

THINKING_TURN = [
    {"role": "user", "content": "What is 6 times 7?"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Six sevens.", "signature": "c2lnbmF0dXJl"},
            {"type": "text", "text": "42."},
        ],
    },
    {"role": "user", "content": "And times 2?"},
]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_anthropic_refusal_naming_a_block_is_repaired_and_retried(
    running: Stack, logs: LogLines, stream: bool, tmp_path: Path
) -> None:
    with running.anthropic() as client:
        if stream:
            with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=THINKING_TURN) as events:
                message = events.get_final_message()
            retried = None
        else:
            raw = client.messages.with_raw_response.create(
                model="claude-sonnet-4-6", max_tokens=64, messages=THINKING_TURN
            )
            message, retried = raw.parse(), raw.headers
    assert "And times 2?" in message.content[0].text  # type: ignore[union-attr]
    first, second = running.requests()
    assert first["status"] == 400 and second["status"] == 200
    assert [b["type"] for b in second["body"]["messages"][1]["content"]] == ["text"]
    # Everything else went as it was: the user's texts, the answer's text.
    assert second["body"]["messages"][0] == THINKING_TURN[0] and second["body"]["messages"][2] == THINKING_TURN[2]
    if retried is not None:
        assert retried["x-suture-retried"] == "1" and retried["x-suture-repairs"] == "1"
    [line] = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert (line["code"], line["strategy"], line["message_index"]) == ("RJ003", "drop-named-scaffolding", 1)
    assert THINKING_REFUSED in line["provider_message"]
    access = wait_for(lambda: logs.records("suture.access", "request"))
    assert access[-1]["retried"] == 1 and access[-1]["status"] == 200
    # The capture holds both attempts: what was sent first, what the provider said, what went next.
    [capture] = wait_for(lambda: list((tmp_path / "captures").glob("*.json")))
    record = json.loads(capture.read_text())
    [retry] = record["rejection_repairs"]
    assert retry["upstream_status"] == 400 and THINKING_REFUSED in retry["provider_message"]
    assert retry["forwarded"]["messages"] == second["body"]["messages"]
    assert record["upstream_status"] == 200


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_openai_chat_refusal_naming_a_message_is_repaired_and_retried(running: Stack, stream: bool) -> None:
    messages = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]
    with running.openai() as client:
        if stream:
            chunks = list(client.chat.completions.create(model="gpt-4.1", messages=messages, stream=True))  # type: ignore[arg-type]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            raw = client.chat.completions.with_raw_response.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
            assert raw.headers["x-suture-retried"] == "1"
            text = raw.parse().choices[0].message.content or ""
    assert "Are you there?" in text
    assert _statuses(running) == [400, 200]
    [merged] = running.requests()[1]["body"]["messages"]
    assert merged == {"role": "user", "content": "Hi.\n\nAre you there?"}


def test_a_long_transcript_is_repaired_from_its_refusal_off_the_event_loop(
    running: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past OFF_LOOP_MESSAGES the repair from the refusal runs in a worker thread, as the first
    repair would; the client still gets its answer, and every earlier message reaches the model."""
    import threading

    import proxy.routes.rejections as rejections
    from proxy.routes.off_loop import OFF_LOOP_MESSAGES

    threads: list[str] = []
    real = rejections.repair_rejection

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(rejections, "repair_rejection", recording)
    history = [
        {"role": role, "content": f"{role} {i}"}
        for i in range(OFF_LOOP_MESSAGES // 2 + 1)
        for role in ("user", "assistant")
    ]
    messages = [*history, {"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]
    with running.openai() as client:
        raw = client.chat.completions.with_raw_response.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
    assert raw.headers["x-suture-retried"] == "1"
    assert "Are you there?" in (raw.parse().choices[0].message.content or "")
    assert _statuses(running) == [400, 200]
    sent = running.requests()[1]["body"]["messages"]
    assert sent[: len(history)] == history
    assert sent[len(history) :] == [{"role": "user", "content": "Hi.\n\nAre you there?"}]
    [thread] = threads
    assert not thread.startswith("uvicorn-")  # tests._support.servers runs each server on such a thread


def test_responses_refusal_naming_an_item_id_is_repaired_and_retried(running: Stack) -> None:
    items = [
        {"type": "message", "role": "user", "content": "Search the news."},
        {
            "type": "web_search_call",
            "id": "ws_0123456789abcdef",
            "status": "completed",
            "action": {"type": "search", "query": "news"},
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
        {"type": "message", "role": "user", "content": "Thanks, now summarise."},
    ]
    with running.openai() as client:
        raw = client.responses.with_raw_response.create(model="gpt-4.1", input=items)  # type: ignore[arg-type]
    assert raw.headers["x-suture-retried"] == "1"
    assert "now summarise" in raw.parse().output_text
    assert _statuses(running) == [400, 200]
    sent = running.requests()[1]["body"]["input"]
    assert [i.get("type") for i in sent] == ["message", "message", "message"]


SHELL_TOOL = [{"type": "function", "name": "shell", "description": "Run a command.", "parameters": {"type": "object"}}]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_responses_stored_chain_with_an_interrupted_call_is_answered_and_retried(
    running: Stack, logs: LogLines, stream: bool
) -> None:
    # openai/codex#394: the model called a tool, Esc interrupted it, and the next turn chains to
    # the stored response with only the user's words. The call is on the server, not in the body.
    with running.openai() as client:
        first = client.responses.create(model="gpt-4.1", input="List the repo. CALL_TOOL shell", tools=SHELL_TOOL)  # type: ignore[arg-type]
        [call] = [item for item in first.output if item.type == "function_call"]
        follow_up = {"model": "gpt-4.1", "previous_response_id": first.id, "input": "No, stop. Just say hi."}
        if stream:
            events = list(client.responses.create(**follow_up, stream=True))  # type: ignore[call-overload]
            text = next(e.response.output_text for e in events if e.type == "response.completed")
        else:
            raw = client.responses.with_raw_response.create(**follow_up)  # type: ignore[call-overload]
            assert raw.headers["x-suture-retried"] == "1"
            text = raw.parse().output_text
    assert "Just say hi." in text
    assert _statuses(running) == [200, 400, 200]
    refused, retried = running.requests()[1:]
    assert refused["body"]["input"] == "No, stop. Just say hi."
    output, user = retried["body"]["input"]
    assert output["type"] == "function_call_output" and output["call_id"] == call.call_id
    assert "interrupted" in output["output"]
    assert user == {"role": "user", "content": "No, stop. Just say hi."}
    [line] = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert (line["code"], line["strategy"], line["tool_call_id"]) == ("RJ007", "answer-stored-call", call.call_id)
    assert line["provider_message"] == f"No tool output found for function call {call.call_id}."


def test_responses_conversation_item_sent_again_is_dropped_and_retried(running: Stack, logs: LogLines) -> None:
    # openai/openai-agents-python#1789: a run with a conversation id sends the turn's call again.
    items = [
        {"type": "message", "role": "user", "content": "How many orders shipped last week?"},
        {
            "type": "function_call",
            "id": "fc_68d25eda79d481959bd7e424738091a006b9ae17d036a0e7",
            "call_id": "call_q1",
            "name": "query_database",
            "arguments": '{"query": "SELECT count(*) FROM orders"}',
        },
        {"type": "function_call_output", "call_id": "call_q1", "output": "1,204"},
    ]
    with running.openai() as client:
        raw = client.responses.with_raw_response.create(model="gpt-4.1", conversation="conv_68d25e", input=items)  # type: ignore[arg-type]
    assert raw.headers["x-suture-retried"] == "1"
    assert raw.parse().status == "completed"
    assert _statuses(running) == [400, 200]
    assert running.requests()[1]["body"]["input"] == [items[0], items[2]]
    [line] = wait_for(lambda: logs.records("suture.repair", "repair after rejection"))
    assert (line["code"], line["strategy"]) == ("RJ008", "drop-stored-duplicate")


def test_gemini_refusal_naming_a_part_is_repaired_and_retried(running: Stack) -> None:
    contents = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="What is 6 times 7?")]),
        genai_types.Content(
            role="model", parts=[genai_types.Part(text="Six sevens.", thought=True), genai_types.Part(text="42.")]
        ),
        genai_types.Content(role="user", parts=[genai_types.Part(text="And times 2?")]),
    ]
    client = genai.Client(api_key="AIza-client-canary", http_options=genai_types.HttpOptions(base_url=running.suture))
    answer = client.models.generate_content(model="gemini-2.5-flash", contents=contents)
    assert "And times 2?" in (answer.text or "")
    assert _statuses(running) == [400, 200]
    parts = running.requests()[1]["body"]["contents"][1]["parts"]
    assert parts == [{"text": "42."}]


def test_bedrock_refusal_naming_a_block_is_repaired_and_retried(running: Stack) -> None:
    config = Config(signature_version="v4", retries={"total_max_attempts": 1}, read_timeout=10)
    client = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=running.suture,
        aws_access_key_id="AKIDCLIENT0000000000",
        aws_secret_access_key="client-secret",
        config=config,
    )

    def add_key(request: Any, **_: Any) -> None:
        request.headers["x-api-key"] = CLIENT_KEY

    client.meta.events.register("before-sign.bedrock-runtime.*", add_key)
    messages = [
        {"role": "user", "content": [{"text": "What is 6 times 7?"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Six sevens.", "signature": "c2ln"}}},
                {"text": "42."},
            ],
        },
        {"role": "user", "content": [{"text": "And times 2?"}]},
    ]
    answer = client.converse(modelId="anthropic.claude-3-5-haiku-20241022-v1:0", messages=messages)
    assert "And times 2?" in answer["output"]["message"]["content"][0]["text"]
    assert _statuses(running) == [400, 200]
    assert running.requests()[1]["body"]["messages"][1]["content"] == [{"text": "42."}]


# --- refusals left alone --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [
        ("CONTEXT-OVERFLOW", "maximum context length"),
        ("UNKNOWN-MODEL", "does not exist"),
        ("NAMES-NOWHERE", "messages[9]"),
    ],
)
def test_a_refusal_a_repair_cannot_help_reaches_the_client_after_one_request(
    running: Stack, trigger: str, expected: str
) -> None:
    with running.openai() as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": f"{trigger} please"}])
    assert expected in caught.value.message
    assert "x-suture-retried" not in caught.value.response.headers
    assert _statuses(running) == [400]


def test_a_refusal_of_another_parameter_is_not_retried(running: Stack) -> None:
    with running.anthropic() as client, pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "TOOLS-PARAM"}]
        )
    assert "tools.0.custom.input_schema" in caught.value.message
    assert _statuses(running) == [400]


def test_an_authentication_failure_is_not_retried(running: Stack) -> None:
    response = httpx.post(
        running.suture + "/v1/chat/completions",
        json={"model": "gpt-4.1", "messages": [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Hi?"}]},
    )
    assert response.status_code == 401
    assert _statuses(running) == [401]


def test_a_second_refusal_reaches_the_client_unchanged(tmp_path: Path) -> None:
    # Two rules the one retry cannot both satisfy: two thinking blocks in different messages.
    turn = [
        *THINKING_TURN,
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Twice 42.", "signature": "c2ln"},
                {"type": "text", "text": "84."},
            ],
        },
        {"role": "user", "content": "Thanks."},
    ]
    with stack(tmp_path) as running, running.anthropic() as client, pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=turn)
    # The retry dropped the first block; the provider then named the second: its answer, as it came.
    assert caught.value.response.json()["error"]["message"] == "messages.3.content.0: " + THINKING_REFUSED
    assert caught.value.response.headers["x-suture-retried"] == "1"
    assert _statuses(running) == [400, 400]


def test_max_attempts_allows_as_many_retries_and_no_more(tmp_path: Path) -> None:
    turn = [
        *THINKING_TURN,
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "84.", "signature": "c2ln"}, {"type": "text", "text": "84."}],
        },
        {"role": "user", "content": "Thanks."},
    ]
    with stack(tmp_path, anthropic={"rejection_repair": {"max_attempts": 2}}) as running, running.anthropic() as client:
        raw = client.messages.with_raw_response.create(model="claude-sonnet-4-6", max_tokens=64, messages=turn)
        assert raw.headers["x-suture-retried"] == "2" and raw.headers["x-suture-repairs"] == "2"
        assert _statuses(running) == [400, 400, 200]
        three = [
            *turn[:-1],
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "x", "signature": "c2ln"}, {"type": "text", "text": "x"}],
            },
            {"role": "user", "content": "Go."},
        ]
        three.insert(-2, {"role": "user", "content": "More."})
        with pytest.raises(anthropic.BadRequestError):
            client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=three)
    # Three blocks to drop, two retries allowed: three requests, the last refusal relayed.
    assert _statuses(running)[3:] == [400, 400, 400]


def test_disabled_per_upstream_the_refusal_comes_back_after_one_request(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]
    disabled = {"rejection_repair": {"enabled": False}}
    with stack(tmp_path, openai=disabled) as running, running.openai() as client, pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
    assert _statuses(running) == [400]


def test_report_mode_never_retries(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]
    with stack(tmp_path, mode="report") as running, running.openai() as client, pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
    assert _statuses(running) == [400]


def test_retries_are_counted_by_upstream_outcome_and_strategy(running: Stack) -> None:
    messages = [{"role": "user", "content": "Hi."}, {"role": "user", "content": "Are you there?"}]
    with running.openai() as client:
        client.chat.completions.create(model="gpt-4.1", messages=messages)  # type: ignore[arg-type]
    text = httpx.get(running.suture + "/metrics").text
    assert (
        'suture_rejection_repairs_total{outcome="accepted",strategy="merge-named-message",upstream="openai"} 1.0'
        in text
    )


def test_captures_list_them_first_and_make_a_fixture_of_one(
    running: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from proxy import cli

    with running.anthropic() as client:
        with pytest.raises(anthropic.BadRequestError):  # an ordinary refusal: captured, not retried
            client.messages.create(
                model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "TOOLS-PARAM"}]
            )
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=THINKING_TURN)
    directory = tmp_path / "captures"
    wait_for(lambda: len(list(directory.glob("*.json"))) == 2)
    capsys.readouterr()
    assert cli.main(["captures", "list", "--dir", str(directory)]) == 0
    _header, first, second = capsys.readouterr().out.splitlines()
    assert "REPAIRED AFTER REFUSAL (drop-named-scaffolding)" in first and "RJ003" in first
    assert "REPAIRED" not in second
    learnt = first.split()[0]
    assert cli.main(["captures", "show", learnt, "--dir", str(directory), "--as-fixture"]) == 0
    fixture = json.loads(capsys.readouterr().out)
    assert fixture["api"] == "anthropic-messages"
    assert fixture["before"]["messages"] == THINKING_TURN
    assert [b["type"] for b in fixture["after"]["messages"][1]["content"]] == ["text"]
    assert THINKING_REFUSED in fixture["description"]
    ordinary = second.split()[0]
    assert cli.main(["captures", "show", ordinary, "--dir", str(directory), "--as-fixture"]) == 2
    assert "not repaired after a refusal" in capsys.readouterr().err
