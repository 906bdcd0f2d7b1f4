"""What a newcomer meets first (issue 42): one rule's reference and the list of rules, a typo in the
config file named with its likely fix, strict mode's refusal in the conditional, a host name DNS
does not know said as such, and the docs' generated sections written and checked."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proxy import cli
from proxy.commands import docs
from proxy.routes.transcripts import describe_repair, strict_refusal
from sanitizer import Repair, sanitize
from sanitizer.rules import RULES, reference, rule_reference

REPO = Path(__file__).resolve().parents[2]
NOWHERE = "https://api.exampel.invalid/v1"  # RFC 2606: a .invalid name never resolves


# suture rules CODE, suture rules --list


def test_rules_code_prints_that_rules_section_of_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules", "tp001"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### TP001 orphan-tool-call\n")
    assert out in reference()
    assert "What it repairs:" in out and "AN001" not in out


def test_rules_takes_several_codes_in_the_order_given(capsys: pytest.CaptureFixture[str]) -> None:
    by_code = {rule.code: rule for rule in RULES}
    assert cli.main(["rules", "AN003", "Tp001"]) == 0
    assert capsys.readouterr().out == rule_reference(by_code["AN003"]) + "\n" + rule_reference(by_code["TP001"])


def test_an_unknown_code_is_one_line_naming_the_closest_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules", "TP01", "TP001", "XX999"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "suture rules: no rule TP01; did you mean TP001, TP007, TP006?",
        "suture rules: no rule XX999 (`suture rules --list` lists them)",
    ]


def test_rules_list_is_one_aligned_line_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(rule.code for rule in RULES)
    assert "TP001 orphan-tool-call" in next(line for line in lines if line.startswith("TP001"))
    assert next(line for line in lines if line.startswith("TP001")).endswith(
        "A tool call that no result answers anywhere in the transcript"
    )
    # The summaries start in one column.
    width = max(len(rule.name) for rule in RULES)
    assert all(line[6 + width : 8 + width] == "  " and line[8 + width] != " " for line in lines)


def test_rules_without_codes_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules"]) == 0
    assert capsys.readouterr().out == reference()


# A typo in the config file


@pytest.mark.parametrize(
    ("yaml", "expected"),
    [
        ("opnai:\n  upstream: https://api.openai.com/v1\n", "opnai: unknown setting (did you mean openai?)"),
        ("openai:\n  upstrem: https://api.openai.com/v1\n", "openai.upstrem: unknown setting (did you mean upstream?)"),
        ("prot: 9000\n", "prot: unknown setting (did you mean port?)"),
        (
            "policy:\n  orphan_tool_cal: pair\n",
            "policy.orphan_tool_cal: unknown setting (did you mean orphan_tool_call?)",
        ),
        (
            "upstreams:\n  mine:\n    protocol: openai\n    bse_url: http://127.0.0.1:1/v1\n",
            "upstreams.mine.bse_url: unknown setting (did you mean base_url?)",
        ),
        (
            "upstreams:\n  mine:\n    protocol: openai\n    base_url: http://127.0.0.1:1/v1\n"
            "routes:\n  - upstream: mine\n    match: x\n    mtach: y\n",
            "routes.0.mtach: unknown setting (did you mean match?)",
        ),
    ],
)
@pytest.mark.parametrize("command", [["config", "check"], ["serve"]])
def test_a_misspelt_config_key_names_the_file_the_key_and_the_closest_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], yaml: str, expected: str, command: list[str]
) -> None:
    config = tmp_path / "suture.yaml"
    config.write_text(yaml, encoding="utf-8")
    assert cli.main([*command, "--config", str(config)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith(f"suture: config error: invalid settings ({config} ")
    assert line.endswith(expected)


def test_a_key_close_to_nothing_gets_no_guess(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "suture.yaml"
    config.write_text("openai:\n  zzzzzz: 1\n", encoding="utf-8")
    assert cli.main(["config", "check", "--config", str(config)]) == 2
    assert capsys.readouterr().err.rstrip().endswith("openai.zzzzzz: unknown setting")


# Strict mode's refusal


def _repair(detail: str) -> Repair:
    return Repair("TP001", "orphan-tool-call", "synthesized", 1, "c1", detail)


def test_strict_mode_says_what_repair_mode_would_have_done() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}],
            },
            {"role": "user", "content": "go on"},
        ],
    }
    repairs = sanitize(body, api="openai-chat").repairs
    message = asyncio.run(strict_refusal(repairs, body, "openai-chat", None, "gpt-4o", frozenset(), None))
    assert message is not None
    assert message.startswith(
        "Suture's strict mode refused this request (it was not sent on), 2 problem(s): "
        "(1) TP001 orphan-tool-call (message 1, tool call c1): in repair mode it would have answered "
        "unanswered call to 't' with a synthetic error result; (2) openai.O1: "
    )


@pytest.mark.parametrize(
    ("detail", "said"),
    [
        ("moved the result for call 'c1'", "would have moved the result for call 'c1'"),
        ("gave the content part(s) as text", "would have given the content part(s) as text"),
        ("put a short assistant message", "would have put a short assistant message"),
        ("tool id rewritten to 'toolu_1'", "would have made this repair: tool id rewritten to 'toolu_1'"),
    ],
)
def test_a_repair_not_made_reads_in_the_conditional(detail: str, said: str) -> None:
    assert (
        describe_repair(_repair(detail))
        == f"TP001 orphan-tool-call (message 1, tool call c1): in repair mode it {said}"
    )


# A host name DNS does not know


def test_probe_says_a_host_name_did_not_resolve(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SUTURE_")}
    upstreams = {f"SUTURE_{name}_UPSTREAM": NOWHERE for name in ("OPENAI", "ANTHROPIC", "GEMINI")}
    done = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "config", "check", "--probe"],
        cwd=REPO,
        env={**clean, **upstreams},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    probe = next(line for line in done.stdout.splitlines() if line.startswith("probe openai"))
    assert probe.startswith(
        f"probe openai {NOWHERE}: unreachable: the host name api.exampel.invalid could not be resolved (DNS"
    )
    assert "Unknown error" not in done.stdout


def test_a_websocket_upstream_dns_does_not_know_is_named_so() -> None:
    from proxy.upstreams.websocket import SocketUnreachable, open_socket

    with pytest.raises(SocketUnreachable) as info:
        asyncio.run(open_socket("wss://api.exampel.invalid/v1/responses", NOWHERE, [], open_timeout=5))
    assert info.value.describe().startswith(
        f"Suture could not reach the upstream {NOWHERE} (NameNotResolved: a host name could not be resolved (DNS"
    )


# suture docs --write / --check


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project of two files, three generated sections, all stale."""
    monkeypatch.setattr(
        docs,
        "GENERATED",
        {
            "README.md": {"one": lambda: "ONE\n", "two": lambda: "| a | b |\n"},
            "docs/ref.md": {"three": lambda: "THREE\nlines\n"},
        },
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "# Title\n\n<!-- one:begin -->\nold\n<!-- one:end -->\nprose\n<!-- two:begin -->\n<!-- two:end -->\nend\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "ref.md").write_text("<!-- three:begin -->\nTHREE\n<!-- three:end -->\n", encoding="utf-8")
    return tmp_path


def test_docs_check_lists_each_stale_section_and_write_makes_them_current(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert docs.stale_sections(tree) == [("README.md", "one"), ("README.md", "two"), ("docs/ref.md", "three")]
    before = {path: path.read_bytes() for path in tree.rglob("*.md")}
    assert cli.main(["docs", "--check", "--root", str(tree)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "README.md: section one is stale",
        "README.md: section two is stale",
        "docs/ref.md: section three is stale",
    ]
    assert {path: path.read_bytes() for path in tree.rglob("*.md")} == before  # --check writes nothing

    assert cli.main(["docs", "--write", "--root", str(tree)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "rewrote README.md: one",
        "rewrote README.md: two",
        "rewrote docs/ref.md: three",
    ]
    assert (tree / "README.md").read_text(encoding="utf-8") == (
        "# Title\n\n<!-- one:begin -->\nONE\n<!-- one:end -->\nprose\n<!-- two:begin -->\n| a | b |\n<!-- two:end -->\nend\n"
    )
    assert (tree / "docs" / "ref.md").read_text(encoding="utf-8") == (
        "<!-- three:begin -->\nTHREE\nlines\n<!-- three:end -->\n"
    )
    assert docs.stale_sections(tree) == []
    assert cli.main(["docs", "--check", "--root", str(tree)]) == 0
    assert cli.main(["docs", "--write", "--root", str(tree)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "all 3 generated sections are current"


def test_docs_missing_file_or_markers_are_listed_by_check_and_refused_by_write(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "docs" / "ref.md").unlink()
    (tree / "README.md").write_text("<!-- one:begin -->\nONE\n<!-- one:end -->\n", encoding="utf-8")
    assert docs.stale_sections(tree) == [("README.md", "two"), ("docs/ref.md", "three")]
    assert cli.main(["docs", "--check", "--root", str(tree)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("README.md: section two needs one <!-- two:begin --> line and one <!-- two:end -->")
    assert out[1] == f"docs/ref.md: no such file under {tree} (section three)"

    readme = (tree / "README.md").read_bytes()
    assert cli.main(["docs", "--write", "--root", str(tree)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith("suture docs: README.md: section two needs one") and "docs/ref.md: no such file" in line
    assert (tree / "README.md").read_bytes() == readme  # nothing written


def test_docs_markers_out_of_order_are_an_error(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "docs" / "ref.md").write_text("<!-- three:end -->\n<!-- three:begin -->\n", encoding="utf-8")
    assert cli.main(["docs", "--write", "--root", str(tree)]) == 2
    assert "its <!-- three:end --> marker comes before its <!-- three:begin --> line" in capsys.readouterr().err


def test_the_real_docs_are_current_where_the_table_says() -> None:
    """`suture docs --check` on this checkout: every section the table names is in its file, current."""
    root = Path(__file__).resolve().parents[2]
    assert docs.stale_sections(root) == []
    assert {"routes", "config", "providers", "rules"} == {
        name for sections in docs.GENERATED.values() for name in sections
    }
