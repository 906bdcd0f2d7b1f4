from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Part, Transcript
from ..validation._openai_chat import GROQ_MESSAGE_KEYS, groq_unsupported_keys
from ._base import Context, Rule, _compact


class UnsupportedMessageKey(Rule):
    """
    What it repairs:
        A message that carries a key Groq's schema does not have for its role, bound for Groq,
        which rejects any such key: a client's own bookkeeping stored with each message (a
        timestamp, an id, a status, metadata), another provider's field replayed with the
        history (DeepSeek's ``reasoning_content``, its ``prefix``), or what an SDK's response
        object holds besides the message (``refusal``).

    Why:
        Groq: "'messages.0' : for 'role:user' the following must be satisfied[('messages.0' :
        property 'timestamp' is unsupported)]"

    Example:
        Before: user {"content": "hi", "timestamp": 1769400000}
        After:  user {"content": "hi"}

    Safety:
        Only the message's own keys that Groq's schema lacks for that role are removed (its
        content, tool calls and ids are keys Groq takes, and stay); each removed key and its
        value are kept in the repair record. Reasoning a model wrote, in a field Groq does not
        take (``reasoning_content``), is removed with the rest and kept there too.
    """

    code = "PV009"
    name = "unsupported-message-key"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"groq"})
    fixes: ClassVar[tuple[str, ...]] = ("groq.X5",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # groq_unsupported_keys as a set comparison: this look runs on every valid request.
        for m in body["messages"]:
            role = m.get("role")
            allowed = GROQ_MESSAGE_KEYS.get(role) if isinstance(role, str) else None
            if allowed is not None and not m.keys() <= allowed:
                return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            # A tool message is its result part (which an id repair may have rewritten).
            result = entry.parts[0] if entry.role == "tool" and entry.parts else None
            message = result.raw if result is not None and isinstance(result.raw, dict) else entry.source
            unsupported = groq_unsupported_keys(entry.role, message)
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
                f"removed the key(s) Groq does not take on {entry.role} messages: {_compact(removed)}",
            )
