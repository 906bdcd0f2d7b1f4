import pytest

from tests._support.proxy_e2e import clear_suture_env


@pytest.fixture(autouse=True)
def _no_ambient_suture_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_suture_env(monkeypatch)
