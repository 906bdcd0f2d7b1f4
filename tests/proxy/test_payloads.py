"""Reading payloads the way users have them, and detecting their API from the body's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy.payloads import PayloadError, detect_api, parse_payload, read_payload

GOLDEN = Path(__file__).resolve().parents[1] / "sanitizer" / "golden"
FIXTURES = sorted(GOLDEN.rglob("*.json"))
SEED = json.loads((GOLDEN / "seeds" / "000-anthropic-messages.json").read_text(encoding="utf-8"))["before"]
OPENAI_SEED = json.loads((GOLDEN / "seeds" / "000-openai-chat.json").read_text(encoding="utf-8"))["before"]


def dumps(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_golden_body_is_detected_as_its_api(fixture: Path) -> None:
    golden = json.loads(fixture.read_text(encoding="utf-8"))
    payload = parse_payload(dumps(golden["before"]))
    assert (payload.api, payload.form) == (golden["api"], "request body")
    assert payload.body == golden["before"]


def test_raw_body() -> None:
    payload = parse_payload(dumps(SEED), source="seed.json")
    assert payload.body == SEED
    assert payload.api == "anthropic-messages"
    assert "top-level `system`" in payload.reason and "tool_use" in payload.reason


def test_json_log_line_with_the_body_inside() -> None:
    line = {
        "ts": "2026-01-01T00:00:00Z",
        "level": "error",
        "event": "llm call failed",
        "request": {"json": OPENAI_SEED},
    }
    payload = parse_payload(dumps(line))
    assert (payload.body, payload.api, payload.form) == (OPENAI_SEED, "openai-chat", "JSON log line")


def test_json_log_line_with_the_body_as_an_encoded_string() -> None:
    line = {"level": "error", "request_body": dumps(SEED), "status": 400}
    payload = parse_payload(dumps(line))
    assert payload.body == SEED
    twice = {"msg": dumps({"payload": dumps(SEED)})}
    assert parse_payload(dumps(twice)).body == SEED


def test_json_lines_log_takes_the_last_request() -> None:
    first = {**OPENAI_SEED, "model": "first"}
    last = {**OPENAI_SEED, "model": "last"}
    text = "\n".join(dumps({"body": b}) for b in (first, {"no": "body"}, last)) + "\n" + dumps({"event": "done"})
    payload = parse_payload(text)
    assert payload.body["model"] == "last"
    assert payload.form == "JSON log line 3 of 4"


def test_http_dump() -> None:
    dump = (
        "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: sk-ant-secret-value\r\n"
        "anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n\r\n" + dumps(SEED)
    )
    payload = parse_payload(dump)
    assert payload.form == "HTTP dump"
    assert payload.body == SEED
    assert payload.path == "/v1/messages"
    assert payload.api == "anthropic-messages"
    assert payload.reason == "the request path is /v1/messages"
    assert dict(payload.headers) == {"anthropic-version": "2023-06-01", "content-type": "application/json"}


def test_http_dump_path_decides_over_the_shape() -> None:
    dump = "POST /v1/chat/completions HTTP/1.1\nHost: x\n\n" + dumps({"model": "m", "max_tokens": 5, "messages": []})
    assert parse_payload(dump).api == "openai-chat"


def test_body_embedded_in_an_error_report() -> None:
    report = (
        'Traceback (most recent call last):\n  File "agent.py", line 3, in <module>\n'
        "anthropic.BadRequestError: Error code: 400 - {'type': 'error', 'error': {'type': "
        "'invalid_request_error', 'message': 'messages.1: `tool_use` ids were found'}}\n"
        "Request that failed (don't retry it):\n"
        + json.dumps(SEED, indent=2, ensure_ascii=False)
        + "\nEnd of report {\n"
    )
    payload = parse_payload(report)
    assert payload.body == SEED
    assert payload.form == "body embedded in text"


def test_python_dict_repr_in_an_sdk_debug_log() -> None:
    log = f"DEBUG:openai._base_client:Request options: {{'method': 'post', 'url': '/chat/completions', 'json_data': {OPENAI_SEED!r}}}"
    payload = parse_payload(log)
    assert payload.body == OPENAI_SEED
    assert payload.api == "openai-chat"


def test_suture_capture_gives_the_original_body_and_its_api() -> None:
    capture = {
        "suture_capture": 1,
        "api": "anthropic-messages",
        "path": "/v1/messages",
        "headers": {"anthropic-version": "2023-06-01", "authorization": "Bearer nope"},
        "original": SEED,
        "forwarded": {**SEED, "messages": []},
    }
    payload = parse_payload(dumps(capture))
    assert (payload.body, payload.api, payload.form) == (SEED, "anthropic-messages", "Suture capture")
    assert dict(payload.headers) == {"anthropic-version": "2023-06-01"}


def test_given_api_wins() -> None:
    payload = parse_payload(dumps(OPENAI_SEED), api="anthropic-messages")
    assert (payload.api, payload.reason) == ("anthropic-messages", "given with --api")


@pytest.mark.parametrize(
    ("body", "api", "because"),
    [
        ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "openai-chat", "no Anthropic markers"),
        (
            {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]},
            "anthropic-messages",
            "max_tokens",
        ),
        ({"messages": [{"role": "system", "content": "s"}], "max_tokens": 9}, "openai-chat", "role system"),
        ({"messages": [], "system": "be brief"}, "anthropic-messages", "top-level `system`"),
        ({"input": [{"role": "user", "content": "hi"}]}, "openai-responses", "`input`"),
        ({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, "gemini", "`contents`"),
        (
            {"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "a"}}]}]},
            "bedrock-converse",
            "toolUse/toolResult",
        ),
    ],
)
def test_detection_by_shape(body: dict[str, Any], api: str, because: str) -> None:
    detected, reason = detect_api(body)
    assert detected == api
    assert because in reason


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the file is empty"),
        (b"\xff\xfe\x00garbage", "not UTF-8 text"),
        (b"just some words, no JSON", "no request body found"),
        (b'{"model": "gpt-4o", "temperature": 1}', "no request body found"),
        (b'{"messages": [', "no request body found (the JSON stops after 14 characters, before it is complete"),
        (
            b'{"messages": [{"role": "user" "content": "hi"}]}',
            "not valid JSON: Expecting ',' delimiter at line 1, column 31",
        ),
        (b'{"model": "gpt-4o"} trailing words', "not valid JSON: Extra data at line 1, column 21"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"messages": ' + b"[" * 100_000, "nested too deeply"),
    ],
)
def test_unreadable_input_names_the_file_and_the_reason(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "payload.json"
    path.write_bytes(content)
    with pytest.raises(PayloadError) as info:
        read_payload(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert reason in message
    assert "\n" not in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PayloadError, match="cannot read: No such file"):
        read_payload(tmp_path / "nope.json")
