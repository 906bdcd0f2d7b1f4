from __future__ import annotations

from collections.abc import Iterator

import pytest

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.emulator import Emulator
from tests._support.servers import running_server


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """One emulator per test module, recording to a fresh file."""
    record = tmp_path_factory.mktemp("emulator") / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app) as url:
        yield Emulator(url, app, record)
