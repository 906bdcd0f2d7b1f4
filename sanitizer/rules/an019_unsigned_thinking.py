from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Transcript
from ..providers import binding
from ._base import Context, Rule

_THINKING = frozenset({THINKING})


class UnsignedThinking(Rule):
    """
    What it repairs:
        A ``thinking`` block with no ``signature``, or an empty one: reasoning a gateway turned
        into a thinking block from an OpenAI-style ``reasoning_content`` (which has no
        signature to give), or a turn whose stream was cut before its signature arrived and
        that a client stored with ``signature: ""``.

    Why:
        Anthropic, Vertex and Bedrock: "messages.1.content.0.thinking.signature: Field
        required" (lbjlaq/Antigravity-Manager#1650), which Bedrock also answers for an empty
        signature (can1357/oh-my-pi PR#10486); Anthropic answers an empty one with
        "messages.1.content.0: Invalid `signature` in `thinking` block".

    Example:
        Before: user "hi" / assistant [thinking "Let me think." (no signature), text "Hello."] /
                user "more"
        After:  user "hi" / assistant [text "Hello."] / user "more"

    Safety:
        Only the API can sign thinking, so no repair can make the block acceptable: it is
        removed, and its thinking text is kept in the repair record. The model never reads
        the thinking of an earlier turn anyway (the API leaves it out of the context), so for
        those nothing it sees changes. A message left empty is removed. With thinking enabled,
        the assistant turn of the last tool round must start with a signed thinking block: if
        the unsigned one was all it had, thinking-without-history turns thinking off for the
        request (A13). Signed thinking and ``redacted_thinking`` are never touched.
    """

    code = "AN019"
    name = "unsigned-thinking"
    apis = frozenset({"anthropic-messages"})
    # DeepSeek's endpoint makes thinking blocks of its own (and wants them back, D3); an Anthropic
    # body bound for a Chat provider reaches it as reasoning, with no signature to check.
    providers = frozenset({"anthropic", "bedrock", "vertex"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.thinking-signature", "anthropic.A15")

    def applies_to(self, api: str, provider: str | None = None) -> bool:
        # An Anthropic body bound for no provider in particular is bound for Anthropic.
        return super().applies_to(api, binding(api, provider).rules if provider is None else provider)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        self.drop_parts(
            transcript,
            ctx,
            _THINKING,
            lambda part: _unsigned(part.raw),
            lambda part: (
                "removed a thinking block without a signature, which the API cannot take; it said: "
                f"{part.raw.get('thinking')!r}"
            ),
        )


def _unsigned(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "thinking" and block.get("signature", "") == ""
