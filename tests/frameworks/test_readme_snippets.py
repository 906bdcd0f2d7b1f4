"""The README's framework snippets run as written: each builds its client against Suture's URL."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def snippet() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Agent frameworks", 1)[1]
    block = re.search(r"```python\n(.*?)\n```", section, re.S)
    assert block is not None
    return block.group(1)


def test_framework_snippets_run_and_point_at_suture(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("agentscope", "langchain_openai", "langchain_anthropic", "agents", "pydantic_ai"):
        pytest.importorskip(module)
    from agents.models import _openai_shared

    # The snippet sets the Agents SDK's process-wide default client; put it back afterwards.
    monkeypatch.setattr(_openai_shared, "_default_openai_client", _openai_shared.get_default_openai_client())
    monkeypatch.setattr(_openai_shared, "_use_responses_by_default", _openai_shared.get_use_responses_by_default())
    namespace: dict[str, object] = {"KEY": "sk-test"}
    exec(compile(snippet(), "README.md", "exec"), namespace)

    assert "http://127.0.0.1:8787" in str(namespace["llm"].anthropic_api_url)  # type: ignore[attr-defined]
    assert str(_openai_shared.get_default_openai_client().base_url) == "http://127.0.0.1:8787/v1/"  # type: ignore[union-attr]
    assert str(namespace["model"].client.base_url).startswith("http://127.0.0.1:8787")  # type: ignore[attr-defined]
