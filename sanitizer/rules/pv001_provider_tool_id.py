from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from ._ids import rewrite_ids
from .an004_invalid_tool_id import readable_id

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_PATTERNS = {
    "mistral": re.compile(r"^[a-zA-Z0-9]{9}$"),
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]+$"),
    "bedrock": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
}


class ProviderToolId(Rule):
    """
    What it repairs:
        Tool-call ids that the provider a body is bound for does not accept: a gateway
        (LiteLLM) forwards ids as they are, so ``call_PTLP8xhu3uwZk4l3`` (OpenAI Chat) or
        ``toolu_01A...`` (an Anthropic client) reaches Mistral, and ``functions.bash:0`` reaches
        Anthropic or Bedrock.

    Why:
        Mistral: "Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but must be a-z, A-Z, 0-9,
        with a length of 9."
        Anthropic: "messages.1.content.0.tool_use.id: String should match pattern
        '^[a-zA-Z0-9_-]+$'"

    Example:
        Before (bound for Mistral): assistant calls get_weather (call_PTLP8xhu3uwZk4l3nlnrrJha) /
                tool result for call_PTLP8xhu3uwZk4l3nlnrrJha
        After:  the same, with the id ``RF5FavT9V`` in the call and its result

    Safety:
        Rewrites the id in the call and every result for it, deterministically (a hash of the
        original), one-to-one. The mapping back to the client's ids is returned with the
        result (``restore_ids``) so the proxy can show the agent its own ids.
    """

    code = "PV001"
    name = "provider-tool-id"
    fixes: ClassVar[tuple[str, ...]] = ("mistral.M1",)
    apis = frozenset({"openai-chat"})
    providers = frozenset(_PATTERNS)
    also_for = frozenset({("anthropic-messages", "mistral")})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        valid = _PATTERNS[ctx.provider or ""].match
        return all(valid(ident) for ident in _call_ids(body, ctx.api))

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        provider = ctx.provider or ""
        candidate = _nine_alphanumerics if provider == "mistral" else readable_id
        rewrite_ids(transcript, ctx, self, _PATTERNS[provider], candidate)


def _nine_alphanumerics(original: str) -> str:
    number = int.from_bytes(hashlib.sha256(original.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    chars = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def _call_ids(body: dict[str, Any], api: str) -> Iterator[Any]:
    """The ids of a body's tool calls and results, as the body gives them."""
    for message in body["messages"]:
        if api == "openai-chat":
            for call in message.get("tool_calls") or ():
                yield call["id"]
            if message.get("role") == "tool":
                yield message.get("tool_call_id")
        elif type(message["content"]) is list:
            for block in message["content"]:
                kind = block.get("type") if type(block) is dict else None
                if kind == "tool_use":
                    yield block["id"]
                elif kind == "tool_result":
                    yield block["tool_use_id"]
