"""One module per wire format: how it stores calls, results, text and thinking."""

from __future__ import annotations

from typing import Any, Protocol

from .._ir import Entry, Part, Transcript


class Dialect(Protocol):
    api: str
    result_role: str
    """The role of the messages that carry tool results (``tool`` or ``user``)."""

    def looks_clean(self, body: dict[str, Any]) -> bool:
        """A cheap, conservative check: True only if no rule could change the body."""

    def parse(self, body: dict[str, Any]) -> Transcript: ...

    def render(self, transcript: Transcript) -> dict[str, Any]: ...

    def synthetic_result(self, call: Part, text: str) -> Part: ...

    def new_result_entries(self, parts: list[Part]) -> list[Entry]: ...

    def with_call_id(self, part: Part, call_id: str) -> Part: ...

    def payload(self, part: Part) -> Any:
        """What a call carries (its arguments) or a result says (its content), for repair records."""


from . import anthropic_messages, openai_chat  # noqa: E402  (they use the names above)

DIALECTS: dict[str, Dialect] = {
    "openai-chat": openai_chat.DIALECT,
    "anthropic-messages": anthropic_messages.DIALECT,
}
