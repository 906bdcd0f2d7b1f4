from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from .._ir import Transcript
from ..providers import binding
from ._base import Context, Rule
from ._ids import digest, rewrite_ids
from .an004_invalid_tool_id import readable_id

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# OpenAI (and Azure, and OpenRouter for OpenAI's models) takes any id of up to 40 characters.
_AT_MOST_40 = re.compile(r"^.{0,40}\Z", re.DOTALL)
_PATTERNS = {
    "mistral": re.compile(r"^[a-zA-Z0-9]{9}$"),
    "anthropic": re.compile(r"^[a-zA-Z0-9_-]+$"),
    "bedrock": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "openai": _AT_MOST_40,
    "azure": _AT_MOST_40,
    "openrouter": _AT_MOST_40,
}


class ProviderToolId(Rule):
    """
    What it repairs:
        Tool-call ids that the provider a body is bound for does not accept: a gateway
        (LiteLLM) forwards ids as they are, so ``call_PTLP8xhu3uwZk4l3`` (OpenAI Chat) or
        ``toolu_01A...`` (an Anthropic client) reaches Mistral, ``functions.bash:0`` reaches
        Anthropic or Bedrock, and an id longer than 40 characters (one a gateway made up for
        Gemini's id-less calls, ``portkey-6aa6db90-...``) reaches OpenAI or Azure.

    Why:
        Mistral: "Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but must be a-z, A-Z, 0-9,
        with a length of 9."
        Anthropic: "messages.1.content.0.tool_use.id: String should match pattern
        '^[a-zA-Z0-9_-]+$'"
        OpenAI and Azure: "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a
        string with maximum length 40, but got a string with length 44 instead."
        (microsoft/autogen#6377, Azure/azure-dev#7324, Portkey-AI/gateway#1062)

    Example:
        Before (bound for Mistral): assistant calls get_weather (call_PTLP8xhu3uwZk4l3nlnrrJha) /
                tool result for call_PTLP8xhu3uwZk4l3nlnrrJha
        After:  the same, with the id ``RF5FavT9V`` in the call and its result
        Before (bound for Azure): assistant calls lookup
                (portkey-6aa6db90-1b84-4155-9f32-f658c97d6b1b) / its result
        After:  the same, with the id ``portkey-6aa6db90-1b84-4155-9f_8ec468140a`` (40
                characters: the original's first 29 and a hash of all of it) in both

    Safety:
        Rewrites the id in the call and every result for it, deterministically (a hash of the
        original), one-to-one; an id the provider takes is never touched. The mapping back to
        the client's ids is returned with the result (``restore_ids``) so the proxy can show
        the agent its own ids.
    """

    code = "PV001"
    name = "provider-tool-id"
    fixes: ClassVar[tuple[str, ...]] = ("mistral.M1", "openai.O10")
    apis = frozenset({"openai-chat"})
    providers = frozenset(_PATTERNS)
    also_for = frozenset(
        {("anthropic-messages", "mistral"), ("anthropic-messages", "openai"), ("openai-responses", "mistral")}
    )

    def applies_to(self, api: str, provider: str | None = None) -> bool:
        return super().applies_to(api, binding(api, provider).rules if provider is None else provider)

    def looks_past(self, api: str, provider: str | None) -> bool:
        # OpenAI Chat's own check takes no id over 40 characters: for OpenAI's pattern (the
        # format's own provider, Azure) there is nothing to look at again; others it asks.
        bound = binding(api, provider).rules if provider is None else provider
        return not (api == "openai-chat" and _PATTERNS.get(bound) is _AT_MOST_40)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        pattern = _PATTERNS[_bound_for(ctx)]
        if pattern is _AT_MOST_40:
            return all(type(ident) is str and len(ident) <= 40 for ident in _call_ids(body, ctx.api))
        return all(type(ident) is str and pattern.match(ident) for ident in _call_ids(body, ctx.api))

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        provider = _bound_for(ctx)
        if provider == "mistral":
            candidate = _nine_alphanumerics
        elif _PATTERNS[provider] is _AT_MOST_40:
            candidate = _first_chars_and_hash
        else:
            candidate = readable_id
        rewrite_ids(transcript, ctx, self, _PATTERNS[provider], candidate)


def _bound_for(ctx: Context) -> str:
    return ctx.provider if ctx.provider is not None else binding(ctx.api, None).rules


def _first_chars_and_hash(original: str) -> str:
    """40 characters: the original's first 29, so a log still shows whose id it was, and a hash of all of it."""
    return f"{original[:29]}_{digest(original)}"


def _nine_alphanumerics(original: str) -> str:
    number = int.from_bytes(hashlib.sha256(original.encode("utf-8", "surrogatepass")).digest()[:8], "big")
    chars = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def _call_ids(body: dict[str, Any], api: str) -> Iterator[Any]:
    """The ids of a body's tool calls and results, as the body gives them."""
    if api == "openai-responses":
        # Calls and outputs are items of their own, each with its call_id.
        for item in body["input"] if type(body.get("input")) is list else ():
            # A server-run tool search has a null call_id: no call to rename.
            if type(item) is dict and item.get("call_id") is not None:
                yield item["call_id"]
        return
    for message in body["messages"]:
        if api == "openai-chat":
            # Only an assistant's tool_calls are calls: the parse reads no other role's.
            role = message.get("role")
            if role == "assistant":
                for call in message.get("tool_calls") or ():
                    yield call["id"]
            elif role == "tool":
                yield message.get("tool_call_id")
        elif type(message["content"]) is list:
            for block in message["content"]:
                kind = block.get("type") if type(block) is dict else None
                if kind == "tool_use":
                    yield block["id"]
                elif kind == "tool_result":
                    yield block["tool_use_id"]
