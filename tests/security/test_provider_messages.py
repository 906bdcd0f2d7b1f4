"""A provider's refusal quotes the key it was given ("Incorrect API key provided: ..."). When Suture
reads a refusal to repair from it, the provider's message is written down: in the ``repair after
rejection`` and ``refusal not repaired`` log lines and in the capture's ``rejection_repairs``. The
request's own credentials (its Authorization bearer, its x-api-key), Suture's own upstream key and
any key-shaped word are redacted there, as they are from the capture's ``upstream_error``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from proxy.redaction import REDACTED
from tests._support.proxy_e2e import LogLines, suture
from tests._support.servers import running_server

# Not key-shaped: only knowing them as this request's credentials can redact them.
CLIENT_BEARER = "client-canary-bearer-7f3a9e0b"
CLIENT_X_API_KEY = "client-canary-xapikey-51c2e0d4"
SUTURE_OWN_KEY = "suture-own-upstream-key-0b8d1c"
# Key-shaped, and no credential of this request: a provider quoting some other key.
THIRD_PARTY = "sk-proj-thirdparty0123456789abcdef"
NEVER_WRITTEN = (CLIENT_BEARER, CLIENT_X_API_KEY, SUTURE_OWN_KEY, THIRD_PARTY)

# Two user turns in a row: the fake upstream refuses them naming messages[1], which Suture can repair.
TWO_USER_TURNS = [{"role": "user", "content": "hi"}, {"role": "user", "content": "there?"}]
UNFIXABLE = [{"role": "user", "content": "UNFIXABLE"}]


def quoting_upstream() -> Starlette:
    """Refuses two turns of one role in a row, and any ``UNFIXABLE`` request, quoting the key it was
    given and a third party's; answers anything else."""

    async def answer(request: Request) -> Response:
        body = await request.json()
        key = request.headers.get("authorization", "").removeprefix("Bearer ") or request.headers.get("x-api-key", "")
        messages = body.get("messages", [])
        if b"UNFIXABLE" in await request.body():
            message = f"Invalid 'temperature' for the key {key} (see also {THIRD_PARTY})"
        else:
            repeated = [i for i in range(1, len(messages)) if messages[i]["role"] == messages[i - 1]["role"]]
            if not repeated:
                return JSONResponse({"id": "ok", "choices": [], "content": []})
            message = (
                f"messages.{repeated[0]}: roles must alternate between user and assistant "
                f"(request made with key {key}; organisation key {THIRD_PARTY})"
            )
        return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status_code=400)

    return Starlette(routes=[Route("/{path:path}", answer, methods=["POST"])])


@contextlib.contextmanager
def quoting_suture(tmp_path: Path, **sections: Any) -> Iterator[str]:
    with running_server(quoting_upstream(), timeout_graceful_shutdown=1) as upstream:
        routes = {"openai": {"upstream": upstream + "/v1"}, "anthropic": {"upstream": upstream}}
        for name, extra in sections.items():
            routes[name] = {**routes[name], **extra}
        with suture(**routes, capture={"dir": str(tmp_path / "captures")}) as url:
            yield url


CASES: dict[str, tuple[dict[str, Any], str, dict[str, str], str]] = {
    "client-authorization": ({}, "/v1/chat/completions", {"authorization": f"Bearer {CLIENT_BEARER}"}, CLIENT_BEARER),
    "client-x-api-key": ({}, "/v1/messages", {"x-api-key": CLIENT_X_API_KEY}, CLIENT_X_API_KEY),
    "suture-s-own-key": (
        {"anthropic": {"upstream_api_key": SUTURE_OWN_KEY}},
        "/v1/messages",
        {"x-api-key": CLIENT_X_API_KEY},
        SUTURE_OWN_KEY,
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_refusal_quoting_the_key_is_written_down_redacted(case: str, tmp_path: Path, logs: LogLines) -> None:
    sections, route, headers, quoted = CASES[case]
    base = {"model": "claude-haiku-4-5" if route == "/v1/messages" else "gpt-4o-mini", "max_tokens": 16}
    with (
        quoting_suture(tmp_path, **sections) as url,
        httpx.Client(base_url=url, headers={"anthropic-version": "2023-06-01", **headers}, timeout=10) as client,
    ):
        repaired = client.post(route, json={**base, "messages": TWO_USER_TURNS})
        refused = client.post(route, json={**base, "messages": UNFIXABLE})
    assert (repaired.status_code, repaired.headers.get("x-suture-retried")) == (200, "1")
    assert refused.status_code == 400
    if quoted != SUTURE_OWN_KEY:
        # Not vacuous: the provider did quote the key, to the client it belongs to.
        assert quoted in refused.text

    retried = logs.records("suture.repair", "repair after rejection")
    unrepaired = logs.records("suture.repair", "refusal not repaired")
    assert retried and unrepaired
    for record in [*retried, *unrepaired]:
        assert REDACTED in record["provider_message"], record
    for line in logs.lines:
        assert not [key for key in NEVER_WRITTEN if key in line], line

    captures = sorted((tmp_path / "captures").glob("*.json"))
    assert len(captures) == 2
    records = [orjson.loads(capture.read_bytes()) for capture in captures]
    said = [r["rejection_repairs"][0]["provider_message"] for r in records if "rejection_repairs" in r]
    errors = [r["upstream_error"]["error"]["message"] for r in records if "upstream_error" in r]
    assert len(said) == len(errors) == 1
    assert said[0].startswith("messages.1: roles must alternate") and said[0].count(REDACTED) == 2
    # Relayed with Suture's own key masked (as many `*`), which is the capture's copy too.
    assert errors[0].startswith("Invalid 'temperature' for the key") and REDACTED in errors[0]
    for capture in captures:
        text = capture.read_text()
        assert not [key for key in NEVER_WRITTEN if key in text], capture
