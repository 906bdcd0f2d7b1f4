"""The emulator as the emulator tests reach it: a running one, and a Bedrock client for its URL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from starlette.applications import Starlette


@dataclass
class Emulator:
    url: str
    app: Starlette
    record: Path


def recorded_requests(record: Path) -> list[dict[str, Any]]:
    """The requests an emulator started with ``record_path=record`` received, oldest first."""
    if not record.exists():
        return []
    lines = record.read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if "event" not in e]


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
