"""The pytest plugin, in a user's project made by pytester: fixtures, readable failures, expect_rules."""

from __future__ import annotations

import contextlib
import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from sanitizer.validation._anthropic import A13

pytest_plugins = ["pytester"]

GOLDEN = Path(__file__).resolve().parents[1] / "sanitizer" / "golden"
SEED = json.loads((GOLDEN / "seeds" / "000-anthropic-messages.json").read_text(encoding="utf-8"))
OPENAI_SEED = json.loads((GOLDEN / "seeds" / "000-openai-chat.json").read_text(encoding="utf-8"))
# Installed with its entry point, pytest loads the plugin by itself; before then, name it.
REGISTERED = any(ep.value == "proxy.pytest_plugin" for ep in entry_points(group="pytest11"))
PLUGIN = [] if REGISTERED else ["-p", "proxy.pytest_plugin"]
# Hypothesis' plugin costs each inner session about two seconds and these projects do not use it.
ARGS = [*PLUGIN, "-p", "no:hypothesispytest"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    payloads = pytester.mkdir("payloads")
    (payloads / "interrupted.json").write_text(json.dumps(SEED["before"]), encoding="utf-8")
    (payloads / "openai.log").write_text(
        json.dumps({"level": "error", "request": json.dumps(OPENAI_SEED["before"])}), encoding="utf-8"
    )
    # Thinking on, and the last tool round's assistant turn lost its thinking block: only the signed
    # original would do, and a model that always thinks cannot have thinking turned off for the
    # request instead, so no repair exists (anthropic.A13 is in the registry's UNREPAIRABLE).
    unknown = {
        "model": "claude-fable-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
        ],
    }
    (payloads / "unknown.json").write_text(json.dumps(unknown), encoding="utf-8")
    # Mistral serves no transcript ending with an assistant turn; Suture repairs it for Mistral (PV006).
    final = {"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}
    (payloads / "final_assistant.json").write_text(json.dumps(final), encoding="utf-8")
    return pytester


def test_passing_assertions_and_fixtures(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_user="""
        from proxy.pytest_plugin import assert_repairs as imported

        def test_fixture(assert_repairs):
            result = assert_repairs("payloads/interrupted.json", provider="anthropic", expect_rules=["TP001"])
            assert [r.code for r in result.repairs] == ["TP001"]

        def test_by_name_and_from_a_log_line(assert_repairs):
            assert_repairs("payloads/openai.log", api="openai-chat", expect_rules=["orphan-tool-call"])

        def test_imported_with_a_body_and_a_policy(suture_payload):
            payload = suture_payload("payloads/interrupted.json")
            assert payload.api == "anthropic-messages"
            result = imported(payload.body, provider="bedrock", policy={"orphan_tool_call": "drop"})
            assert result.repairs[0].action == "dropped"

        def test_valid_body_needs_no_rules(assert_repairs):
            assert_repairs({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, expect_rules=[])
        """
    )
    result = project.runpytest(*ARGS)
    result.assert_outcomes(passed=4)


def test_failure_shows_the_violations_left_after_repair(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_user="""
        def test_unknown_rule(assert_repairs):
            assert_repairs("payloads/unknown.json", provider="anthropic")
        """
    )
    result = project.runpytest(*ARGS)
    result.assert_outcomes(failed=1)
    assert (
        "payloads/unknown.json (anthropic-messages) is still invalid for anthropic after Suture's repair.\n"
        "Violations (- fixed by the repair, ! still there; 1 left):\n"
        f"  ! anthropic.A13 [message 1]: {A13.format(n=1, found='tool_use')}\n"
        "Repairs applied: none\n"
    ) in result.stdout.str()
    assert "Traceback" not in result.stdout.str()


def test_failure_diffs_the_rules_that_fired(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_user="""
        def test_wrong_rules(assert_repairs):
            assert_repairs("payloads/interrupted.json", expect_rules=["AN002", "TP001"])

        def test_unknown_rule_name(assert_repairs):
            assert_repairs("payloads/interrupted.json", expect_rules=["no-such-rule"])

        def test_unreadable(assert_repairs):
            assert_repairs("payloads/missing.json")

        def test_unknown_provider(assert_repairs):
            assert_repairs("payloads/interrupted.json", provider="groq")
        """
    )
    result = project.runpytest(*ARGS)
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    assert (
        "The rules that fired differ from expect_rules:\n"
        "  - AN002 blank-text-block (expected, did not fire)\n"
        "  expected: ['AN002', 'TP001']; fired: ['TP001']\n"
    ) in out
    assert "expect_rules names no known rule: no-such-rule (see `suture rules`)" in out
    assert "suture: payloads/missing.json: cannot read: No such file or directory" in out
    assert (
        "unknown provider 'groq' for api anthropic-messages; known: anthropic, bedrock, vertex, openai, mistral, deepseek"
        in out
    )


@pytest.mark.skipif(not REGISTERED, reason="the pytest11 entry point is not installed yet (pyproject.toml)")
def test_entry_point_names_the_plugin() -> None:
    [ep] = [ep for ep in entry_points(group="pytest11") if ep.value == "proxy.pytest_plugin"]
    assert ep.name == "suture"


@pytest.mark.slow
def test_the_entry_point_alone_loads_the_plugin(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # What `[project.entry-points.pytest11] suture = "proxy.pytest_plugin"` installs, made by hand.
    site = project.mkdir("site")
    info = site / "suture_entry_point_probe-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: suture-entry-point-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nsuture = proxy.pytest_plugin\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    project.makepyfile(
        test_user="""
        def test_fixture(assert_repairs):
            assert_repairs("payloads/interrupted.json", expect_rules=["TP001"])
        """
    )
    result = project.runpytest_subprocess("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1)


def test_the_plugin_and_suture_check_agree_for_every_provider_name(tmp_path: Path) -> None:
    """For every provider name the core's table takes, a body `suture check --provider` says Suture
    repairs is one the plugin accepts, and a body it says stays invalid is one the plugin fails."""
    from proxy.cli import main
    from proxy.pytest_plugin import assert_repairs as plugin
    from sanitizer.providers import ACCEPTED

    thinking_lost = {
        "model": "claude-fable-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "ls", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]},
        ],
    }
    bodies = [
        # Valid for most, repaired for Mistral and Gemini (a final assistant turn).
        (
            "openai-chat",
            {"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
        ),
        # An interrupted tool call: repaired for every provider.
        (
            "anthropic-messages",
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 16,
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
                    {"role": "user", "content": "b"},
                ],
            },
        ),
        # The last tool round's thinking was lost, on a model that always thinks: unrepairable (A13).
        ("anthropic-messages", thinking_lost),
    ]
    verdicts = []
    for index, (api, body) in enumerate(bodies):
        path = tmp_path / f"{index}.json"
        path.write_text(json.dumps(body), encoding="utf-8")
        for provider in ACCEPTED[api]:
            out = tmp_path / "out.json"
            with out.open("w") as stream, contextlib.redirect_stdout(stream):
                main(["check", str(path), "--api", api, "--provider", provider, "--json"])
            verdict = json.loads(out.read_text())
            repaired_clean = verdict["after_repair"] == []
            try:
                plugin(path, api=api, provider=provider)
                passed = True
            except pytest.fail.Exception:
                passed = False
            assert passed == repaired_clean, (api, provider, verdict)
            verdicts.append(passed)
    assert len(verdicts) == len(ACCEPTED["openai-chat"]) + 2 * len(ACCEPTED["anthropic-messages"])
    assert True in verdicts and False in verdicts
