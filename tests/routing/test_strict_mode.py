"""Strict mode judges a routed body by the same provider's rules as `suture check --provider`:
one resolution of "which validator rules bind this body", wherever a body is judged."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import httpx

from proxy.app import build_app
from proxy.cli import main
from tests._support.litellm_routes import NO_LITELLM, Provider, routed_settings
from tests._support.servers import running_server

pytestmark = NO_LITELLM

# Fine for OpenAI; Anthropic (whose OpenAI-compatible endpoint converts it) answers
# "final assistant content cannot end with trailing whitespace".
TRAILING_SPACE = {
    "model": "claude-fake-4",
    "messages": [{"role": "user", "content": "Say yes"}, {"role": "assistant", "content": "Yes "}],
}


def _check(body: dict[str, object], provider: str, tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["check", str(path), "--provider", provider, "--json"])
    assert status in (0, 1), err.getvalue()
    result: dict[str, object] = json.loads(out.getvalue())
    return result


def test_strict_mode_rejects_a_routed_chat_body_by_the_rules_suture_check_applies(
    providers: dict[str, Provider], tmp_path: Path
) -> None:
    checked = _check(TRAILING_SPACE, "anthropic", tmp_path)
    violations = checked["violations"]
    assert isinstance(violations, list) and violations, checked
    with running_server(build_app(routed_settings(providers, mode="strict")), timeout_graceful_shutdown=2) as url:
        response = httpx.post(url + "/v1/chat/completions", json=TRAILING_SPACE, timeout=10)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert message.startswith("Suture's strict mode refused this request")
    for violation in violations:
        assert isinstance(violation, dict)
        assert f"{violation['rule']}: {violation['message']}" in message
    assert providers["anthropic"].fake.received == []  # judged locally, never sent
