from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Part, Transcript
from ..validation._openai_chat import (
    CEREBRAS_REFUSED_KEYS,
    FIREWORKS_MESSAGE_KEYS,
    GROQ_MESSAGE_KEYS,
    cerebras_refused_keys,
    fireworks_unsupported_keys,
    groq_unsupported_keys,
)
from ._base import Context, Rule, _compact

_NAMES = {"groq": "Groq", "cerebras": "Cerebras", "fireworks": "Fireworks"}
_REFUSED = {
    "groq": groq_unsupported_keys,
    "cerebras": cerebras_refused_keys,
    "fireworks": fireworks_unsupported_keys,
}


class UnsupportedMessageKey(Rule):
    """
    What it repairs:
        A message that carries a key the provider's schema does not have for its role, bound
        for a provider that rejects such keys rather than ignoring them. Groq rejects any key
        outside its schema: a client's own bookkeeping stored with each message (a timestamp,
        an id, a status, metadata), another provider's field replayed with the history
        (DeepSeek's ``reasoning_content``, its ``prefix``), or what an SDK's response object
        holds besides the message (``refusal``). Cerebras rejects ``reasoning_content`` on an
        assistant message, on every model: the field in which OpenAI-compatible SDKs and agents
        replay a reasoning model's thinking (Cerebras's own field is ``reasoning``). Fireworks
        rejects any key outside its message schema too, on every role: a client's chain-of-thought
        bookkeeping replayed with an assistant message (``cot_id``, ``cot_summary``).

    Why:
        Groq: "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' :
        property 'timestamp' is unsupported)]"
        Cerebras: "messages.2.assistant.reasoning_content: property
        'messages.2.assistant.reasoning_content' is unsupported" (Kilo-Org/kilocode#10375,
        NousResearch/hermes-agent#34716: every turn after the first fails)
        Fireworks: "Extra inputs are not permitted" for ``messages[2].cot_id`` and
        ``messages[2].cot_summary`` (microsoft/vscode#335780: every follow-up request fails);
        worded "Extra inputs are not permitted, field: 'stream_options'" for a request key
        (FlowiseAI/Flowise#2866)

    Example:
        Before: user {"content": "hi", "timestamp": 1769400000}
        After:  user {"content": "hi"}
        Before (bound for Cerebras): assistant {"content": "4", "reasoning_content": "2+2..."}
        After:  assistant {"content": "4"}

    Safety:
        Only the message's own keys that the provider's schema lacks for that role are removed
        (its content, tool calls and ids are keys both take, and stay); each removed key and its
        value are kept in the repair record. Reasoning a model wrote, in a field the provider
        does not take (``reasoning_content``), is removed with the rest and kept there too: the
        model answered without it before, and the answer itself is untouched. It is not moved
        into ``content``, which would show the model its reasoning as words it said, nor renamed
        to Cerebras's ``reasoning``, which only one measurement says Cerebras takes back.
    """

    code = "PV009"
    name = "unsupported-message-key"
    apis = frozenset({"openai-chat"})
    providers = frozenset(_NAMES)
    fixes: ClassVar[tuple[str, ...]] = ("groq.X5", "cerebras.unsupported-property", "fireworks.extra-input")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # The provider's key check as set comparisons: this look runs on every valid request.
        if ctx.provider == "cerebras":
            for m in body["messages"]:
                role = m.get("role")
                refused = CEREBRAS_REFUSED_KEYS.get(role) if isinstance(role, str) else None
                if refused is not None and not m.keys().isdisjoint(refused):
                    return False
            return True
        if ctx.provider == "fireworks":
            return all(m.keys() <= FIREWORKS_MESSAGE_KEYS for m in body["messages"])
        for m in body["messages"]:
            role = m.get("role")
            allowed = GROQ_MESSAGE_KEYS.get(role) if isinstance(role, str) else None
            if allowed is not None and not m.keys() <= allowed:
                return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        refused = _REFUSED[ctx.provider or "groq"]
        who = _NAMES[ctx.provider or "groq"]
        for entry in transcript.entries:
            # A tool message is its result part (which an id repair may have rewritten).
            result = entry.parts[0] if entry.role == "tool" and entry.parts else None
            message = result.raw if result is not None and isinstance(result.raw, dict) else entry.source
            unsupported = refused(entry.role, message)
            if not unsupported:
                continue
            removed = {key: message[key] for key in unsupported}
            kept = {key: value for key, value in message.items() if key not in removed}
            entry.source = kept
            call_id = None
            if result is not None:
                entry.parts[0] = Part(RESULT, kept, result.call_id, result.name)
                call_id = result.call_id
            ctx.report(
                self,
                "removed",
                entry,
                call_id,
                f"removed the key(s) {who} does not take on {entry.role} messages: {_compact(removed)}",
            )
