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
