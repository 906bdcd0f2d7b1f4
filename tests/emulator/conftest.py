from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from starlette.applications import Starlette

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests.servers import running_server


@dataclass
class Emulator:
    url: str
    app: Starlette
    record: Path


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    """One emulator per test module, recording to a fresh file."""
    record = tmp_path_factory.mktemp("emulator") / "requests.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app) as url:
        yield Emulator(url, app, record)


def bedrock_client(url: str) -> Any:
    """SigV4 with fake credentials, no retries; ``signature_version`` set in code so an ambient
    AWS_BEARER_TOKEN_BEDROCK cannot switch the client to bearer auth."""
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="AKIDEMULATOR",
        aws_secret_access_key="emulator-secret",
        config=Config(signature_version="v4", retries={"total_max_attempts": 1}, read_timeout=10),
    )
