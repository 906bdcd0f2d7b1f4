"""The litellm bridge's pure parts: ids given back, SSE re-framing, and error mapping."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import orjson
import pytest

from proxy.upstreams import via_litellm as gateway
from sanitizer.rejection import refusal_message
from tests._support.litellm_routes import NO_LITELLM

RESTORE = {"aB3dE5gH7": "call_client_own_id"}


def test_restore_ids_in_both_formats() -> None:
    completion = {
        "id": "chatcmpl-1",
        "choices": [{"message": {"tool_calls": [{"id": "aB3dE5gH7", "function": {"name": "f", "arguments": "{}"}}]}}],
    }
    message = {"id": "msg_1", "content": [{"type": "tool_use", "id": "aB3dE5gH7", "name": "f", "input": {}}]}
    restored = gateway.restore_ids(completion, RESTORE)
    assert restored["choices"][0]["message"]["tool_calls"][0]["id"] == "call_client_own_id"
    assert restored["id"] == "chatcmpl-1"
    assert gateway.restore_ids(message, RESTORE)["content"][0]["id"] == "call_client_own_id"
    # Text that merely equals an id is content, not an id: it stays.
    assert gateway.restore_ids({"text": "aB3dE5gH7"}, RESTORE) == {"text": "aB3dE5gH7"}
    assert gateway.restore_ids(completion, {}) is completion


async def _bytes(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _collect(stream: AsyncIterator[bytes]) -> list[bytes]:
    return [frame async for frame in stream]


def test_anthropic_events_are_restored_across_chunk_boundaries() -> None:
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "aB3dE5gH7"}}
    events = (
        b"event: message_start\ndata: {}\n\n" + b"event: content_block_start\ndata: " + orjson.dumps(start) + b"\n\n"
    )
    chunks = [events[:40], events[40:77], events[77:]]
    frames = asyncio.run(_collect(gateway.sse_frames("anthropic-messages", _bytes(chunks), RESTORE)))
    assert len(frames) == 2 and all(f.endswith(b"\n\n") for f in frames)
    assert frames[1].startswith(b"event: content_block_start\ndata: ")
    data = orjson.loads(frames[1].split(b"data: ", 1)[1])
    assert data["content_block"]["id"] == "call_client_own_id"
    # Without ids to restore, the adapter's bytes pass untouched.
    untouched = asyncio.run(_collect(gateway.sse_frames("anthropic-messages", _bytes(chunks), {})))
    assert untouched == chunks


class _Chunk:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return self.data


async def _chunks(items: list[dict[str, Any]]) -> AsyncIterator[_Chunk]:
    for item in items:
        yield _Chunk(item)


def test_openai_chunks_become_data_lines_ending_in_done() -> None:
    delta = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "aB3dE5gH7"}]}}]}
    frames = asyncio.run(_collect(gateway.sse_frames("openai-chat", _chunks([delta]), RESTORE)))
    assert frames[-1] == b"data: [DONE]\n\n"
    assert orjson.loads(frames[0][6:])["choices"][0]["delta"]["tool_calls"][0]["id"] == "call_client_own_id"


def test_responses_events_are_named_and_their_call_ids_restored() -> None:
    call = {"type": "function_call", "id": "fc_1", "call_id": "aB3dE5gH7", "name": "f", "arguments": "{}"}
    events = [
        {"type": "response.output_item.done", "output_index": 0, "item": call, "sequence_number": 0},
        {"type": "response.completed", "response": {"output": [call]}, "sequence_number": 1},
    ]
    frames = asyncio.run(_collect(gateway.sse_frames("openai-responses", _chunks(events), RESTORE)))
    # OpenAI's Responses stream: each event named in an `event:` line, and no [DONE] after the last.
    assert [f.split(b"\n", 1)[0] for f in frames] == [b"event: response.output_item.done", b"event: response.completed"]
    done, completed = (orjson.loads(f.split(b"\ndata: ", 1)[1]) for f in frames)
    assert done["item"]["call_id"] == "call_client_own_id" and done["item"]["id"] == "fc_1"
    assert completed["response"]["output"][0]["call_id"] == "call_client_own_id"


def test_a_responses_stream_fails_with_openais_error_event() -> None:
    frame = gateway.error_event("openai-responses", 529, "overloaded", sequence_number=7)
    event, _, data = frame.removesuffix(b"\n\n").partition(b"\n")
    assert event == b"event: error"
    assert orjson.loads(data.removeprefix(b"data: ")) == {
        "type": "error",
        "code": "529",
        "message": "overloaded",
        "param": None,
        "sequence_number": 7,
    }


def _raised(make: Callable[[Any], BaseException], cause: BaseException | None = None) -> BaseException:
    """``make(litellm)`` raised (from ``cause``) and caught, as litellm's callers see it."""
    litellm = gateway._import_litellm()
    try:
        try:
            if cause is not None:
                raise cause
        except BaseException as inner:
            raise make(litellm) from inner
        raise make(litellm)
    except BaseException as caught:
        return caught


def _dns_failure() -> BaseException:
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as exc:
            raise httpx.ConnectError("Cannot connect to host nowhere.invalid:443") from exc
    except httpx.ConnectError as caught:
        return caught


@NO_LITELLM
@pytest.mark.parametrize(
    ("make", "cause", "expected"),
    [
        pytest.param(
            lambda m: m.BadRequestError(
                'MistralException - {"object": "error", "message": "Unexpected role \'user\' after role \'tool\'"}',
                model="m",
                llm_provider="mistral",
            ),
            None,
            (400, "Unexpected role 'user' after role 'tool'"),
            id="400",
        ),
        pytest.param(
            lambda m: m.RateLimitError(
                'RateLimitError: VertexAIException - {"error": {"code": 429, "message": "Resource exhausted"}}',
                llm_provider="gemini",
                model="g",
            ),
            None,
            (429, "Resource exhausted"),
            id="429",
        ),
        pytest.param(
            lambda m: m.AuthenticationError(
                "AnthropicException - invalid x-api-key", llm_provider="anthropic", model="c"
            ),
            None,
            (401, "invalid x-api-key"),
            id="401",
        ),
        pytest.param(
            lambda m: m.Timeout("Connection timed out after 600s", model="m", llm_provider="mistral"),
            None,
            (504, "the provider did not answer in time"),
            id="timeout",
        ),
        pytest.param(
            lambda m: m.InternalServerError("AnthropicException - Cannot connect", llm_provider="anthropic", model="c"),
            "dns",
            (502, "Suture could not reach the provider: [Errno -2] Name or service not known"),
            id="dns-as-500",
        ),
        pytest.param(
            lambda m: m.ServiceUnavailableError("BedrockException - Cannot connect", llm_provider="bedrock", model="b"),
            "dns",
            (502, "Suture could not reach the provider: [Errno -2] Name or service not known"),
            id="dns-as-503",
        ),
        pytest.param(
            lambda m: m.APIConnectionError("'NoneType' object is not subscriptable", llm_provider="gemini", model="g"),
            None,
            (502, "litellm failed: APIConnectionError"),
            id="litellm-fault",
        ),
        pytest.param(lambda m: KeyError("choices"), None, (502, "litellm failed: KeyError"), id="keyerror"),
        pytest.param(
            # litellm quotes a streamed request's error body as the repr of its bytes.
            lambda m: m.BadRequestError(
                """AnthropicException - b'{"type": "error", "error": {"message": "bad \\xc3\\xa9"}}'""",
                model="c",
                llm_provider="anthropic",
            ),
            None,
            (400, "bad é"),
            id="bytes-repr",
        ),
    ],
)
def test_litellm_errors_map_to_statuses_by_type_with_the_providers_message(
    make: Callable[[Any], BaseException], cause: str | None, expected: tuple[int, str]
) -> None:
    error = gateway._gateway_error(_raised(make, _dns_failure() if cause == "dns" else None), refusal_message)
    assert (error.status, error.message[: len(expected[1])]) == expected or (
        error.status == expected[0] and expected[1] in error.message
    ), (error.status, error.message)


def test_litellm_s_own_log_lines_come_out_as_suture_s_json_lines_once_each() -> None:
    import json
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    # A fresh interpreter: litellm sets up its loggers when first imported.
    script = textwrap.dedent(
        """
        import logging
        from proxy.logs import configure_logging
        from proxy.upstreams import via_litellm

        configure_logging("info")
        via_litellm._import_litellm()
        logging.getLogger("LiteLLM").warning("litellm says hello")
        logging.getLogger("LiteLLM Router").warning("the router too")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is JSON: no plain-text banner
    assert [(r["logger"], r["event"]) for r in records if r["logger"].startswith("LiteLLM")] == [
        ("LiteLLM", "litellm says hello"),
        ("LiteLLM Router", "the router too"),
    ]
