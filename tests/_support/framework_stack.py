"""What the agent framework tests run against: the emulator (the provider) and a Suture in front of it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Stack:
    """The emulator (the provider) and a Suture in front of it."""

    provider: str  # the emulator's URL: what an agent calls without Suture
    suture: str
    record: Path

    def requests(self) -> list[dict[str, Any]]:
        """What the provider received, in order (the emulator's JSON-lines record)."""
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def last_body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.requests()[-1]["body"]
        return body

    def answered(self, call_id: str) -> bool:
        """Whether the last request the provider received answers ``call_id`` with a result
        (Chat ``tool`` message, Anthropic ``tool_result``, Responses ``function_call_output``)."""
        body = self.last_body()
        items = body.get("messages") or body.get("input") or []
        for item in items:
            if item.get("role") == "tool" and item.get("tool_call_id") == call_id:
                return True
            if item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                return True
            content = item.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == call_id
                for b in content
            ):
                return True
        return False
