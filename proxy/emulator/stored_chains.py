"""OpenAI Responses' stored chains, as the emulator keeps them: which calls each response made.

A request that continues a response (``previous_response_id``) must answer that response's calls
in its ``input``; OpenAI keeps the response and answers "No tool output found for function call
call_...." when one is not (openai/codex#394: an interrupted call, then a turn of only the user's
words). The emulator remembers the calls of the responses it made (the latest ones, bounded) so a
running Suture can be shown repairing such a chain. A chain to a response it does not know is
taken as it is.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from sanitizer.validation._responses import R1

_KIND = {"function_call": "function call", "custom_tool_call": "custom tool call"}
_OUTPUTS = frozenset(("function_call_output", "custom_tool_call_output"))


class StoredChains:
    """The calls of the last ``limit`` stored responses, by response id."""

    def __init__(self, limit: int = 10_000) -> None:
        self._limit = limit
        self._calls: OrderedDict[str, tuple[tuple[str, str], ...]] = OrderedDict()

    def unanswered(self, body: dict[str, Any]) -> str | None:
        """OpenAI's refusal for a request that leaves a call of the response it continues unanswered."""
        calls = self._calls.get(body.get("previous_response_id"))  # type: ignore[arg-type]
        if not calls:
            return None
        items = body.get("input")
        answered = (
            {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") in _OUTPUTS}
            if isinstance(items, list)
            else set()
        )
        for kind, call_id in calls:
            if call_id not in answered:
                return R1.format(what=_KIND[kind], id=call_id)
        return None

    def remember(self, body: dict[str, Any], response: dict[str, Any]) -> None:
        """Keep ``response``'s calls, unless the request asked not to be stored."""
        if body.get("store") is False:
            return
        calls = tuple((i["type"], i["call_id"]) for i in response.get("output", ()) if i.get("type") in _KIND)
        if calls:
            self._calls[response["id"]] = calls
            if len(self._calls) > self._limit:
                self._calls.popitem(last=False)

    def remember_stream(self, body: dict[str, Any], frames: list[bytes]) -> None:
        """As :meth:`remember`, from the ``response.completed`` event a stream ends with."""
        data = frames[-1].split(b"data: ", 1)[1] if frames else b""
        event = json.loads(data) if data else {}
        if event.get("type") == "response.completed":
            self.remember(body, event["response"])
