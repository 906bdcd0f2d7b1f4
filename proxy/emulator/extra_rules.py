"""Rules the emulator can enforce on top of the validator's: ones Suture's sanitizer does not know.

Providers tighten their rules without notice; these stand in for such a rule, so repair from a
refusal can be shown and tested through a running Suture. Each refuses one kind of transcript
with a message naming where (``{n}``: the message, ``{m}``: the block, ``{id}``, ``{type}``,
``{role}``). ``suture emulate --extra-rules FILE`` reads them from a JSON list of objects with
these fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

# The body field that holds each format's transcript and, per message, its blocks.
_MESSAGES = {
    "openai-chat": "messages",
    "anthropic-messages": "messages",
    "bedrock-converse": "messages",
    "gemini": "contents",
    "openai-responses": "input",
}
_BLOCKS = {"gemini": "parts"}


@dataclass(frozen=True)
class ExtraRule:
    """One extra refusal for bodies of ``api``: the first message (and block) that matches
    gets ``message`` (formatted with ``n``, ``m``, ``id``, ``type``, ``role``) with ``status``.

    Exactly one of: ``block_type`` (a block, or a Responses item, of that type; in messages of
    ``role`` if given), ``same_role_runs`` (a message with the role of the one before it),
    ``message_text`` (a message whose text contains it: a refusal that names nothing, for
    controls).
    """

    api: str
    message: str
    status: int = 400
    block_type: str | None = None
    role: str | None = None
    same_role_runs: bool = False
    message_text: str | None = None

    def __post_init__(self) -> None:
        if self.api not in _MESSAGES:
            raise ValueError(f"extra rule: unknown api {self.api!r}; known: {', '.join(_MESSAGES)}")
        chosen = [self.block_type is not None, self.same_role_runs, self.message_text is not None]
        if sum(chosen) != 1:
            raise ValueError("extra rule: give exactly one of block_type, same_role_runs, message_text")

    def refusal(self, body: dict[str, Any]) -> str | None:
        """The refusal's message for ``body``, or None when the rule has nothing against it."""
        messages = body.get(_MESSAGES[self.api])
        if not isinstance(messages, list):
            return None
        previous = None
        for n, message in enumerate(messages):
            if not isinstance(message, dict):
                continue
            role = str(message.get("role", ""))
            if self.same_role_runs:
                if previous == role and role in ("user", "assistant", "model"):
                    return self.message.format(n=n, role=role)
                previous = role
            elif self.message_text is not None:
                if self.message_text in json.dumps(message, ensure_ascii=False):
                    return self.message.format(n=n, role=role)
            elif self.role is None or role == self.role:
                found = self._block(message, n)
                if found is not None:
                    return found
        return None

    def _block(self, message: dict[str, Any], n: int) -> str | None:
        if self.api == "openai-responses":
            # A Responses item is the unit: {m} is not used.
            if message.get("type") == self.block_type:
                return self.message.format(n=n, m=0, id=message.get("id", ""), type=self.block_type, role="")
            return None
        blocks = message.get(_BLOCKS.get(self.api, "content"))
        if not isinstance(blocks, list):
            return None
        for m, block in enumerate(blocks):
            if isinstance(block, dict) and _type(block) == self.block_type:
                ident = block.get("id") or block.get("tool_use_id") or ""
                return self.message.format(n=n, m=m, id=ident, type=self.block_type, role=message.get("role", ""))
        return None


def _type(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if isinstance(kind, str):
        return kind
    if block.get("thought") is True:  # Gemini's thought summary: {"text": ..., "thought": true}
        return "thought"
    # Gemini's and Bedrock's blocks are keyed by their kind ({"reasoningContent": ...}).
    keys = [k for k in block if k not in ("thoughtSignature", "thought_signature")]
    return keys[0] if keys else ""


def load_extra_rules(path: Path) -> tuple[ExtraRule, ...]:
    """The rules in a JSON file (a list of objects); raises ValueError with what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: must hold a JSON list of rules")
    known = {f.name for f in fields(ExtraRule)}
    rules = []
    for index, item in enumerate(data):
        if not isinstance(item, dict) or not known.issuperset(item) or "api" not in item or "message" not in item:
            raise ValueError(f"{path}: rule {index} must be an object with api, message and only {sorted(known)}")
        try:
            rules.append(ExtraRule(**item))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: rule {index}: {exc}") from None
    return tuple(rules)
