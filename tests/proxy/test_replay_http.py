"""`suture replay` when the provider fails: no answer (refused, timed out, cut off) or an error status.

replay's client is httpx, so respx stands in for the provider. The emulator-backed replay tests
(a 400 then a 200, a 401 without a key, an unreachable port) are in test_commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from proxy import cli

SEED = Path(__file__).resolve().parents[1] / "sanitizer" / "golden" / "seeds" / "000-anthropic-messages.json"
TO = "https://api.anthropic.test"
URL = f"{TO}/v1/messages"
KEY = "sk-ant-replay-key-must-not-show"


@pytest.fixture(autouse=True)
def _anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.mark.parametrize(
    "error", [httpx.ConnectError, httpx.ConnectTimeout, httpx.ReadTimeout, httpx.RemoteProtocolError]
)
def test_no_answer_is_shown_with_its_cause_and_fails(
    error: type[httpx.HTTPError], capsys: pytest.CaptureFixture[str]
) -> None:
    with respx.mock(assert_all_called=True) as mock:
        # Some errors quote what was sent: the key must still not reach the terminal.
        route = mock.post(URL).mock(side_effect=error(f"failed while sending x-api-key {KEY}"))
        assert cli.main(["replay", str(SEED), "--to", TO, "--json"]) == 1
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert route.call_count == 2  # the original and the repaired body, each tried once
    for side in ("original", "repaired"):
        assert report[side] == {
            "status": None,
            "reason": f"no answer ({error.__name__})",
            "body": "failed while sending x-api-key [redacted]",
            "sent": True,
        }
    assert KEY not in out + err


def test_no_answer_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    with respx.mock(assert_all_called=True) as mock:
        mock.post(URL).mock(side_effect=httpx.ReadTimeout("timed out"))
        assert cli.main(["replay", str(SEED), "--to", TO, "--timeout", "5"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"POST {URL}"
    assert lines[2].startswith("no answer (ReadTimeout)") and lines[2].endswith("| no answer (ReadTimeout)")


@pytest.mark.parametrize(
    ("status", "reason", "exit_code"), [(200, "OK", 0), (429, "Too Many Requests", 1), (503, "Service Unavailable", 1)]
)
def test_the_repaired_answers_status_decides_the_exit_code(
    status: int, reason: str, exit_code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    rejected = httpx.Response(
        400,
        json={
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "tool_use ids were found without tool_result blocks"},
        },
    )
    # A long error page that echoes the key: shown cut to 4 KiB, the key redacted.
    answer = httpx.Response(status, text=f"echo: {KEY} " + "x" * 10_000)
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(URL).mock(side_effect=[rejected, answer])
        assert cli.main(["replay", str(SEED), "--to", TO, "--json"]) == exit_code
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert (report["original"]["status"], report["original"]["reason"]) == (400, "Bad Request")
    assert "tool_use ids were found" in report["original"]["body"]
    assert (report["repaired"]["status"], report["repaired"]["reason"]) == (status, reason)
    assert report["repaired"]["body"].startswith("echo: [redacted] xxx")
    assert len(report["repaired"]["body"]) == 4096
    assert KEY not in out + err
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    assert [json.loads(call.request.content) for call in route.calls] == [seed["before"], seed["after"]]
    assert all(call.request.headers["x-api-key"] == KEY for call in route.calls)


def test_a_key_straddling_the_cut_is_redacted_whole(capsys: pytest.CaptureFixture[str]) -> None:
    rejected = httpx.Response(400, text="x" * 4090 + KEY + "y" * 100)
    with respx.mock(assert_all_called=True) as mock:
        mock.post(URL).mock(side_effect=[rejected, httpx.Response(200, json={})])
        assert cli.main(["replay", str(SEED), "--to", TO, "--json"]) == 0
    out, err = capsys.readouterr()
    shown = json.loads(out)["original"]["body"]
    assert shown == "x" * 4090 + "[redac"
    assert KEY[:6] not in out + err
