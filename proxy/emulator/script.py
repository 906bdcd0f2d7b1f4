"""What the emulated model says: a deterministic text reply, or a tool call on request.

The three wire formats render the same :class:`Reply`; only the extraction of the last user
text and the rendering differ per API.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

# A user turn containing ``CALL_TOOL <name>`` makes the model call ``<name>``, with the JSON
# object that may follow the name as its arguments: the way tests drive an agent into a tool
# loop (a real agent then runs the tool). Names follow OpenAI's function-name alphabet.
_CALL_TOOL = re.compile(r"CALL_TOOL\s+([A-Za-z0-9_-]{1,64})[ \t]*")
_DECODER = json.JSONDecoder()
# Roles that are instructions rather than turns: Claude Code (Anthropic, which takes one there
# from Claude Opus 4.8) and aider (Chat) put a system message after the user's, whose turn it
# still is.
_NOT_TURNS = frozenset({"system", "developer"})
_ALPHABET = string.ascii_letters + string.digits
_SNIPPET_CHARS = 60


@dataclass(frozen=True)
class Reply:
    """The model's turn: text, or one tool call (``tool_name``) with ``arguments`` as JSON text."""

    text: str
    tool_name: str | None = None
    arguments: str = "{}"

    @property
    def input(self) -> dict[str, Any]:
        """The arguments as an object (Anthropic's ``input``, Gemini's ``args``)."""
        value: dict[str, Any] = json.loads(self.arguments)
        return value

    @property
    def output_tokens(self) -> int:
        return max(1, len(self.text.split()) + (2 if self.tool_name else 0))


def decide_reply(last_user_text: str | None) -> Reply:
    """A tool call if the final user turn says ``CALL_TOOL <name> [{json arguments}]``, else a text reply.

    Only the *final* turn counts: once the agent sends the tool result, the last message is
    no longer the user's text, so the model answers in text and the loop ends. Arguments that
    are not a JSON object get a text reply saying so, not a call.
    """
    if last_user_text is not None and (match := _CALL_TOOL.search(last_user_text)):
        name = match.group(1)
        rest = last_user_text[match.end() :]
        if not rest.startswith("{"):
            return Reply(text=f"Calling {name}.", tool_name=name)
        try:
            arguments, _ = _DECODER.raw_decode(rest)
        except ValueError as exc:
            return Reply(text=f"CALL_TOOL {name}: the arguments are not JSON ({exc}).")
        return Reply(
            text=f"Calling {name}.",
            tool_name=name,
            arguments=json.dumps(arguments, ensure_ascii=False, separators=(",", ":")),
        )
    snippet = " ".join((last_user_text or "").split())
    if len(snippet) > _SNIPPET_CHARS:
        snippet = snippet[: _SNIPPET_CHARS - 3] + "..."
    return Reply(text=f'Emulated reply. Last user text: "{snippet}"')


def new_id(prefix: str, length: int = 24) -> str:
    """A fresh provider-style id such as ``toolu_…`` or ``call_…``; never repeats in practice."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def count_tokens(*values: Any) -> int:
    """A rough token count: whitespace-separated words over every string inside ``values``."""
    return max(1, sum(len(text.split()) for text in _strings(values)))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def text_of(content: Any, part_types: frozenset[str]) -> str | None:
    """A message's text: the string itself, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and part.get("type") in part_types and isinstance(part.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def chunks(text: str) -> list[str]:
    """Split text into word-sized stream deltas that concatenate back to ``text``."""
    return re.findall(r"\S+\s*|\s+", text) or [text]


def last_user_text(messages: Any, part_types: frozenset[str]) -> str | None:
    """The text of the last turn when the user sent it (a ``messages`` list, Chat or Anthropic).

    System (and Chat's developer) messages after it are instructions, not turns: skipped."""
    if not isinstance(messages, list):
        return None
    turns = [m for m in messages if not (isinstance(m, dict) and m.get("role") in _NOT_TURNS)]
    if not turns or not isinstance(turns[-1], dict):
        return None
    last = turns[-1]
    return text_of(last.get("content"), part_types) if last.get("role") == "user" else None
