"""What a wire format tells the rules: where results live, how ids look, how to build parts."""

from __future__ import annotations

import re
from typing import Any

from .._ir import CALL, THINKING, Entry, Part, Transcript

CLEAN: frozenset[str] = frozenset()
"""No rule of the format's own could change the body (:meth:`Dialect.suspects`)."""


class Dialect:
    """A wire format. Subclasses parse and render it and say how its results are laid out."""

    api: str
    result_role: str
    """The role of the messages that carry tool results (``tool`` or ``user``)."""
    results_share_message = False
    """Several results sit in one message (Anthropic, Gemini, Bedrock) rather than one each."""
    results_span_messages = True
    """One turn's results may be spread over consecutive messages (the API merges them)."""
    thinking_pins_calls = False
    """A call may not be removed from a message with thinking (its signature covers the call)."""
    tool_id_pattern: re.Pattern[str] | None = None
    """Tool-call ids must match this; ``None`` when the format takes any string."""
    empty_final_assistant_ok = False
    """An empty final assistant message is allowed (Anthropic's prefill)."""

    def looks_clean(self, body: dict[str, Any]) -> bool:
        """A cheap, conservative check: True only if no rule could change the body."""
        raise NotImplementedError

    def suspects(self, body: dict[str, Any]) -> frozenset[str] | None:
        """The codes of the format's own rules that may change ``body``, from the same cheap read
        as :meth:`looks_clean`: empty when none could, ``None`` when the read cannot tell which.

        The full pass skips the rules ahead of the first suspect, which find nothing on a body
        no rule has changed yet: a rule that would change ``body`` must be a suspect or come after
        one. A dialect that names no suspects answers ``None`` for every body it cannot vouch for.
        """
        return CLEAN if self.looks_clean(body) else None

    def parse(self, body: dict[str, Any]) -> Transcript:
        raise NotImplementedError

    def render(self, transcript: Transcript) -> dict[str, Any]:
        raise NotImplementedError

    def synthetic_result(self, call: Part, text: str) -> Part:
        raise NotImplementedError

    def new_result_entries(self, parts: list[Part]) -> list[Entry]:
        raise NotImplementedError

    def with_call_id(self, part: Part, call_id: str) -> Part:
        raise NotImplementedError

    def payload(self, part: Part) -> Any:
        """What a call carries (its arguments) or a result says (its content), for repair records."""
        raise NotImplementedError

    def public_id(self, call_id: str | None) -> str | None:
        """The id as the client knows it (``None`` for an id the dialect made up to pair parts)."""
        return call_id

    def droppable(self, entry: Entry, calls: list[Part]) -> list[Part]:
        """The parts to remove with ``calls`` when the drop policy removes them."""
        return calls

    def has_tool_definitions(self, body: dict[str, Any]) -> bool:
        return True

    def history_elsewhere(self, body: dict[str, Any]) -> bool:
        """Earlier turns live on the provider (a stored chain), so a result may answer a call the
        body does not hold."""
        return False

    def history_still_elsewhere(self, transcript: Transcript) -> bool:
        """:meth:`history_elsewhere` for the transcript as earlier rules left it, which may have
        removed what brought the stored history in."""
        return self.history_elsewhere(transcript.body)

    def stub_tools(self, body: dict[str, Any], names: list[str], description: str) -> dict[str, Any]:
        """Top-level fields that declare ``names`` as tools the model cannot call."""
        raise NotImplementedError

    def text_entry(self, role: str, text: str) -> Entry:
        """A new message holding only ``text``."""
        raise NotImplementedError


def pinned_by_thinking(dialect: Dialect, entry: Entry) -> bool:
    return dialect.thinking_pins_calls and entry.has(THINKING)


def call_names(transcript: Transcript) -> list[str]:
    return list(dict.fromkeys(p.name or "unknown_tool" for _, p in transcript.parts() if p.kind == CALL))
