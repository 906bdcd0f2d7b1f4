"""Fixtures of the suites that run Suture: no ambient SUTURE_* settings, and its log lines as ``logs``.

Imported by those suites' conftest.py files, so each defines them once, here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests._support.proxy_e2e import LogLines, captured_logs, clear_suture_env


@pytest.fixture(autouse=True)
def _no_ambient_suture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_suture_env(monkeypatch)


@pytest.fixture
def logs() -> Iterator[LogLines]:
    """Every record of the ``suture.*`` loggers, rendered by Suture's JSON formatter."""
    with captured_logs() as handler:
        yield handler
