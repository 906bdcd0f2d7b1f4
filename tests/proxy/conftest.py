import logging
import os
from collections.abc import Iterator

import pytest

from tests.proxy.helpers import LogLines


@pytest.fixture(autouse=True)
def _no_ambient_suture_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A developer's own SUTURE_* variables must not leak into the settings under test.
    for name in list(os.environ):
        if name.startswith("SUTURE_"):
            monkeypatch.delenv(name)
    yield


@pytest.fixture
def logs() -> Iterator[LogLines]:
    """Every record of the ``suture.*`` loggers, rendered by Suture's JSON formatter."""
    handler = LogLines()
    logger = logging.getLogger("suture")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
