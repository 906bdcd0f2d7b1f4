"""`suture check`, `fix`, `replay` and `captures` on the seed payloads and every golden fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from proxy import cli
from proxy.emulator import EmulatorConfig, build_emulator_app
from sanitizer import APIS, Policy, SanitizeError, sanitize, validate, validator_provider
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

GOLDEN = Path(__file__).resolve().parents[1] / "sanitizer" / "golden"
FIXTURES = sorted(GOLDEN.rglob("*.json"))
SEEDS = sorted((GOLDEN / "seeds").glob("*.json"))
SEED = GOLDEN / "seeds" / "000-anthropic-messages.json"
OPENAI_SEED = GOLDEN / "seeds" / "000-openai-chat.json"


def golden(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def invalid(body: Any, api: str, provider: str | None = None, model: str | None = None, betas: Any = ()) -> bool:
    try:
        return bool(validate(body, api=api, provider=validator_provider(api, provider), model=model, betas=betas))
    except SanitizeError:
        return True


def write_body(tmp_path: Path, body: Any, name: str = "body.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def policy_args(case: dict[str, Any]) -> list[str]:
    """The policy, the provider the fixture's body is bound for and its model (where the body does
    not name it), as command-line options."""
    bound = ["--provider", case["provider"]] if case.get("provider") else []
    model = ["--model", case["model"]] if case.get("model") else []
    betas = [arg for beta in case.get("betas") or () for arg in ("--beta", beta)]
    return [arg for k, v in case.get("policy", {}).items() for arg in ("--policy", f"{k}={v}")] + bound + model + betas


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


# check


@pytest.mark.parametrize("fixture", FIXTURES, ids=fixture_id)
def test_check_every_golden_fixture(fixture: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = golden(fixture)
    expected = (
        1
        if invalid(case["before"], case["api"], case.get("provider"), case.get("model"), case.get("betas") or ())
        else 0
    )
    assert cli.main(["check", str(fixture), *policy_args(case)]) == expected
    out, err = capsys.readouterr()
    assert f"detected api: {case['api']}" in err
    if case["api"] in APIS and case["repairs"]:
        assert all(r["code"] in out for r in case["repairs"])
    assert cli.main(["check", str(fixture), "--json", *policy_args(case)]) == expected
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is (expected == 0)
    assert report["api"] == case["api"]
    if case["api"] in APIS:
        assert report["repairs"] == case["repairs"]


def test_check_seed_lists_the_exact_provider_message_index_ids_and_repair(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", str(SEED)]) == 1
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"{SEED}: detected api: anthropic-messages (because the golden fixture names it; read from: golden fixture)"
    ]
    before = golden(SEED)["before"]
    [violation] = validate(before, api="anthropic-messages")
    assert f"anthropic.A1 [message 1] 400: {violation.message}" in out
    assert "tc_slow_1" in violation.message
    assert "TP001 orphan-tool-call [message 1, tool call tc_slow_1] synthesized" in out
    assert "After repair: valid for anthropic." in out


def test_check_several_files_and_providers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    after = write_body(tmp_path, golden(SEED)["after"], "after.json")
    assert cli.main(["check", str(after)]) == 0
    assert "valid for anthropic (anthropic-messages)" in capsys.readouterr().out
    assert cli.main(["check", str(after), str(SEED)]) == 1
    assert cli.main(["check", str(after), str(SEED), str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert f"suture: {tmp_path / 'missing.json'}: cannot read" in err
    assert cli.main(["check", str(SEED), "--provider", "bedrock"]) == 1
    assert "bedrock (anthropic-messages) would reject it" in capsys.readouterr().out
    assert cli.main(["check", str(SEED), "--provider", "cohere"]) == 2
    assert "unknown provider 'cohere' for api anthropic-messages" in capsys.readouterr().err
    # A gateway can take an Anthropic body to Mistral: checked as Anthropic, repaired for Mistral.
    assert cli.main(["check", str(SEED), "--provider", "mistral"]) == 1
    assert "PV001 provider-tool-id" in capsys.readouterr().out


def test_gemini_model_comes_from_the_request_path_or_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "list files"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"output": "a.txt"}}}]},
        ]
    }
    dump = tmp_path / "dump.http"
    path = "/v1beta/models/gemini-3-pro-preview:generateContent"
    dump.write_text(f"POST {path} HTTP/1.1\nHost: x\n\n" + json.dumps(body), encoding="utf-8")
    assert cli.main(["check", str(dump)]) == 1
    out = capsys.readouterr().out
    assert "gemini.G4" in out and "GM003 missing-thought-signature" in out
    # The body alone names no model: valid for a Gemini 2 one, a Gemini 3 one only with --model.
    plain = write_body(tmp_path, body)
    assert cli.main(["check", str(plain)]) == 0
    capsys.readouterr()
    assert cli.main(["fix", str(plain), "--model", "gemini-3-pro-preview"]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["contents"][1]["parts"][0]["thoughtSignature"] == "skip_thought_signature_validator"


def test_check_shape_error_is_invalid_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_body(tmp_path, {"model": "m", "messages": [{"role": "user", "content": 5}]})
    assert cli.main(["check", str(path)]) == 1
    assert "not a valid openai-chat body: messages[0].content" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe", b"no json here", b'{"model": "x"}'],
    ids=["empty", "not-utf8", "prose", "no-transcript"],
)
def test_unreadable_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    for command in (["check", str(path)], ["fix", str(path)], ["replay", str(path), "--to", "http://127.0.0.1:9"]):
        assert cli.main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"suture: {path}: ")
        assert err.count("\n") == 1
        assert "Traceback" not in err


def test_check_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import sys

    data = json.dumps(golden(OPENAI_SEED)["before"]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main(["check", "-"]) == 1
    assert "-: detected api: openai-chat (because it has" in capsys.readouterr().err


# fix


@pytest.mark.parametrize("fixture", FIXTURES, ids=fixture_id)
def test_fix_every_golden_fixture(fixture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = golden(fixture)
    if case["api"] not in APIS:
        assert cli.main(["fix", str(fixture)]) == 2
        assert f"Suture cannot repair {case['api']} bodies yet" in capsys.readouterr().err
        return
    # The body alone, so the API is detected from its shape.
    path = write_body(tmp_path, case["before"])
    expected = (
        1
        if invalid(case["after"], case["api"], case.get("provider"), case.get("model"), case.get("betas") or ())
        else 0
    )
    assert cli.main(["fix", str(path), *policy_args(case)]) == expected
    out, err = capsys.readouterr()
    assert json.loads(out) == case["after"]
    assert f"detected api: {case['api']}" in err
    if case["repairs"]:
        assert err.splitlines()[1].split() == ["CODE", "RULE", "ACTION", "MESSAGE", "TOOL", "CALL", "DETAIL"]
        for repair in case["repairs"]:
            assert repair["detail"] in err
    else:
        assert "no repairs needed" in err
    assert cli.main(["fix", str(path), "--json", "-o", str(tmp_path / "out.json"), *policy_args(case)]) == expected
    out, err = capsys.readouterr()
    assert out == ""
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == case["after"]
    lines = [json.loads(line) for line in err.splitlines()[1:]]
    assert [line for line in lines if "remaining" not in line] == case["repairs"]


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_fix_seed_output_is_accepted_by_check(seed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = golden(seed)
    out = tmp_path / "fixed.json"
    code = cli.main(["fix", str(seed), "-o", str(out), *policy_args(case)])
    if case["api"] not in APIS:
        assert code == 2
        return
    assert code == 0
    capsys.readouterr()
    assert cli.main(["check", str(out)]) == 0


def test_fix_policy_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fix", str(SEED), "--policy", "orphan_tool_call=maybe"]) == 2
    assert "--policy: orphan_tool_call must be 'pair' or 'drop'" in capsys.readouterr().err
    assert cli.main(["fix", str(SEED), "--policy", "nonsense"]) == 2
    assert "--policy takes KEY=VALUE" in capsys.readouterr().err
    assert cli.main(["fix", str(SEED), "--policy", "colour=red"]) == 2
    assert "unknown policy key(s): colour" in capsys.readouterr().err


def test_fix_drop_policy(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fix", str(OPENAI_SEED), "--policy", "orphan_tool_call=drop"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (
        out == sanitize(golden(OPENAI_SEED)["before"], api="openai-chat", policy=Policy(orphan_tool_call="drop")).body
    )


def _deep_broken_body(depth: int) -> bytes:
    """The OpenAI seed's broken transcript with a field nested ``depth`` levels in its last message."""
    body = golden(OPENAI_SEED)["before"]
    head = json.dumps(body)[:-2]  # the body without its closing "]}"
    return (head + ', {"role": "user", "content": "more", "extra": ' + "[" * depth + "1" + "]" * depth + "}]}").encode()


@pytest.mark.parametrize("depth", [300, 1000])
def test_fix_writes_a_body_nested_deeper_than_orjson_writes(
    depth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # orjson reads 1,024 levels and writes 254: the repaired body must still come out whole.
    path = tmp_path / "deep.json"
    path.write_bytes(_deep_broken_body(depth))
    out = tmp_path / "fixed.json"
    assert cli.main(["fix", str(path), "-o", str(out)]) == 0
    assert "TP001" in capsys.readouterr().err
    fixed = orjson.loads(out.read_bytes())
    expected = sanitize(orjson.loads(path.read_bytes()), api="openai-chat").body
    assert fixed == expected
    assert fixed["messages"][-1]["extra"] == orjson.loads("[" * depth + "1" + "]" * depth)


def test_check_a_body_nested_past_what_json_reads_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deeper.json"
    path.write_bytes(_deep_broken_body(100_000))
    assert cli.main(["check", str(path)]) == 2
    assert "nested too deeply" in capsys.readouterr().err


# replay


@pytest.fixture(scope="module")
def anthropic_emulator() -> Any:
    with running_server(build_emulator_app(EmulatorConfig(provider="anthropic"))) as url:
        yield url


@pytest.fixture(scope="module")
def openai_emulator() -> Any:
    with running_server(build_emulator_app(EmulatorConfig(provider="openai"))) as url:
        yield url


# The emulator speaks Chat Completions, Responses and Messages.
REPLAYABLE = [s for s in SEEDS if golden(s)["api"] in ("openai-chat", "openai-responses", "anthropic-messages")]


@pytest.mark.slow
@pytest.mark.parametrize("seed", REPLAYABLE, ids=lambda p: p.stem)
def test_replay_every_seed_against_the_emulator(
    seed: Path,
    anthropic_emulator: str,
    openai_emulator: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = golden(seed)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai-key-must-not-show")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-must-not-show")
    to = anthropic_emulator if case["api"] == "anthropic-messages" else openai_emulator + "/v1"
    assert cli.main(["replay", str(seed), "--to", to, "--json", *policy_args(case)]) == 0
    out, _ = capsys.readouterr()
    report = json.loads(out)
    assert report["original"]["status"] == (400 if invalid(case["before"], case["api"], case.get("provider")) else 200)
    assert report["repaired"]["status"] == 200
    assert "must-not-show" not in out


def test_replay_shows_both_outcomes_side_by_side(
    anthropic_emulator: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-must-not-show")
    assert cli.main(["replay", str(SEED), "--to", anthropic_emulator]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == f"POST {anthropic_emulator}/v1/messages"
    assert lines[1].startswith("original") and "| repaired (1 repair(s))" in lines[1]
    assert lines[2].startswith("400 Bad Request") and lines[2].endswith("| 200 OK")
    assert "tool_use" in out and "invalid_request_error" in out
    assert "must-not-show" not in out + err


def test_replay_without_a_key_shows_the_providers_401(
    anthropic_emulator: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert cli.main(["replay", str(SEED), "--to", anthropic_emulator, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["original"]["status"] == report["repaired"]["status"] == 401
    assert (
        cli.main(
            [
                "replay",
                str(SEED),
                "--to",
                anthropic_emulator,
                "--json",
                "--header",
                "x-api-key: sk-ant-from-header-secret",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert json.loads(out)["repaired"]["status"] == 200
    assert "sk-ant-from-header-secret" not in out


def test_replay_through_a_suture_proxy(
    anthropic_emulator: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-must-not-show")
    with suture(anthropic={"upstream": anthropic_emulator}) as url:
        assert cli.main(["replay", str(SEED), "--to", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # Suture repairs the original in flight, so both are accepted.
    assert report["original"]["status"] == report["repaired"]["status"] == 200


def test_replay_unreachable_upstream_and_valid_body(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests._support.servers import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    assert cli.main(["replay", str(SEED), "--to", dead]) == 1
    assert "no answer (ConnectError)" in capsys.readouterr().out
    valid = write_body(tmp_path, golden(SEED)["after"])
    assert cli.main(["replay", str(valid), "--to", dead, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["repaired"]["sent"] is False
    assert cli.main(["replay", str(SEED), "--to", "ftp://example.com"]) == 2
    assert "--to must be an http:// or https:// URL" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("base", "api", "path", "url"),
    [
        ("https://api.openai.com/v1", "openai-chat", None, "https://api.openai.com/v1/chat/completions"),
        ("https://api.anthropic.com", "anthropic-messages", None, "https://api.anthropic.com/v1/messages"),
        ("https://api.anthropic.com/", "anthropic-messages", "/v1/messages", "https://api.anthropic.com/v1/messages"),
        ("http://127.0.0.1:8787", "openai-chat", None, "http://127.0.0.1:8787/v1/chat/completions"),
        (
            "https://x.example/openai/deployments/d/chat/completions",
            "openai-chat",
            None,
            "https://x.example/openai/deployments/d/chat/completions",
        ),
    ],
)
def test_replay_target_url(base: str, api: str, path: str | None, url: str) -> None:
    from proxy.commands.replay import target_url

    assert target_url(base, api, path) == url


# help


def test_help_lists_every_command_on_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    block = out.split("  COMMAND\n", 1)[1].splitlines()
    # One line per command: a wrapped help text would add a line that starts with spaces only.
    assert [line.split()[0] for line in block] == [
        "demo",
        "serve",
        "emulate",
        "rules",
        "check",
        "fix",
        "replay",
        "captures",
        "profiles",
        "config",
        "docs",
    ]
