"""The README's promises: its commands are the ones CI runs; the generated references of the docs are current."""

from __future__ import annotations

import re
from pathlib import Path

from sanitizer.rules import providers_reference, reference

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
RULES = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
ROUTING = (ROOT / "docs" / "routing.md").read_text(encoding="utf-8")


def test_rule_reference_is_generated_from_the_rules() -> None:
    section = re.search(r"<!-- rules:begin -->\n(.*)<!-- rules:end -->", RULES, re.S)
    assert section is not None
    assert section.group(1) == reference(), "docs/rules.md is stale: regenerate it with `suture rules`"


def test_provider_list_is_generated_from_the_provider_table() -> None:
    section = re.search(r"<!-- providers:begin -->\n(.*)<!-- providers:end -->", ROUTING, re.S)
    assert section is not None
    assert section.group(1) == providers_reference(), (
        "docs/routing.md's provider list is stale: regenerate it with `suture rules --providers`"
    )
    for name in ("xai", "zhipu", "nim", "lmstudio", "fireworks", "llamacpp", "cerebras", "dashscope"):
        assert f"| openai-chat | {name} |" in section.group(1)


def test_the_readme_is_a_front_door_not_a_manual() -> None:
    """What a newcomer reads in five minutes: the references and the history live in docs/ and bench/."""
    assert len(README.splitlines()) <= 300
    assert "suture demo" in README.split("## Point your agent at it")[0]
    for page in ("getting-started", "configuration", "routing", "rules", "operations", "deployment", "security"):
        assert f"docs/{page}.md" in README, page


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README, re.S)
    test_command = commands[1]
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_suture_rules_prints_the_reference(capsys) -> None:  # type: ignore[no-untyped-def]
    from proxy.cli import main

    assert main(["rules"]) == 0
    assert capsys.readouterr().out == reference()
