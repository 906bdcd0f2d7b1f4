"""Everything a user can tune about repairs, in one immutable object built once at start-up."""

from __future__ import annotations

import string
from dataclasses import dataclass, fields
from typing import Any, Literal

from ._errors import PolicyError

OrphanToolCall = Literal["pair", "drop"]
TrailingToolCall = Literal["pair", "leave"]
OrphanToolResult = Literal["fold", "drop"]
MissingThoughtSignature = Literal["dummy", "leave"]
TrailingAssistant = Literal["keep", "drop", "auto"]
TrailingThinking = Literal["continue", "drop"]
ThinkingWithoutHistory = Literal["disable", "leave"]

DEFAULT_SYNTHETIC_RESULT = (
    "Tool call `{name}` was interrupted before a result came back. "
    "It may have partly run: check its effects before relying on them or retrying."
)
DEFAULT_BRIDGE_TEXT = "(Tool results received.)"
DEFAULT_STUB_TOOL_DESCRIPTION = (
    "Declared by Suture because the conversation history uses this tool; it is not callable now."
)

_TEMPLATE_FIELDS = frozenset({"name", "id"})


@dataclass(frozen=True, slots=True)
class Policy:
    """How the sanitizer repairs what it finds.

    orphan_tool_call: ``pair`` answers a tool call that has no result with a synthetic error
        result placed right after the assistant message that owns it; ``drop`` removes the
        unexecuted call instead (never from a message that carries thinking blocks, whose
        signature covers the call: those are paired).
    trailing_tool_call: what to do with unanswered calls in the last message of the
        transcript. ``pair`` (default) treats them like any orphan; ``leave`` forwards them
        as they are, for clients that will send the results themselves.
    orphan_tool_result: what to do with a tool result whose call is nowhere in the transcript
        (history truncation or compaction cut the call away). ``fold`` (default) keeps what the
        tool returned as plain text in the user turn, labelled with the tool's name and the call
        id; ``drop`` removes the result (its content is kept in the repair record only). The same
        goes for an earlier result of a call answered twice that says something else than the
        last (which is kept).
    synthetic_result_text: the text of a synthetic result. ``{name}`` and ``{id}`` are
        replaced with the tool's name and the call id. Keep it free of timestamps so provider
        prompt caches stay valid.
    stub_tool_description: description of the stub tool definitions added when a request's
        history holds tool blocks but the request defines no tools.
    bridge_text: the text of the short assistant message placed between a turn of tool results
        and the user's next text, for providers that take neither in one turn nor two user
        turns in a row (Bedrock Converse).
    missing_thought_signature: what to do with a replayed Gemini function call that lacks the
        thought signature Gemini 3 models require (history written by another model, compacted,
        or converted by a gateway). ``dummy`` (default) gives the first call of each model turn
        Google's documented stand-in signature, ``skip_thought_signature_validator``; ``leave``
        forwards the calls as they are. Only for models that require signatures (Gemini 3 and
        later), known from a Chat body's ``model`` or, for a native Gemini body, from the model
        its URL names; a real signature is never touched.
    trailing_assistant: what to do with an assistant message that ends the transcript (a
        prefill, or an interrupted answer stored as the last turn). ``keep`` forwards it;
        ``drop`` removes it (its text is kept in the repair record); ``auto`` (default) drops it
        only for the models known to refuse prefill (Claude Opus 4.6 to 4.8, Sonnet 4.6,
        Sonnet 5, Fable 5: the table in rule AN009), named by the body's ``model`` or by the
        caller. A final message that holds thinking blocks, or that is the whole conversation,
        is never dropped: a short user message is added after it instead. DeepSeek's reasoner
        and Mistral take a final assistant message in prefix mode only: there ``auto`` adds the
        user message "Continue." after it rather than dropping what may be a prompt its author
        wrote, and ``drop`` removes it (not when it holds reasoning_content or system messages
        follow it, which refer to it: "Continue." is added then too).
    trailing_thinking: what to do with a final assistant message that Anthropic refuses for its
        thinking blocks: one that ends in thinking (a turn interrupted after its thinking), or
        one that holds thinking while the request disables thinking. ``continue`` (default)
        adds the user message "Continue." after it, so the signed blocks are kept as they are;
        ``drop`` removes the thinking blocks at fault (every one when thinking is disabled, the
        trailing ones otherwise; their text is kept in the repair record), so the message stays
        a prefill.
    thinking_without_history: what to do with a request that turns Claude's thinking on while the
        assistant turn of its last tool round holds no thinking block (history written with
        thinking off, by another model, or by a framework that keeps no thinking blocks), which
        Anthropic refuses. ``disable`` (default) turns thinking off for that request only (the
        transcript is left as it is; the removed settings are kept in the repair record);
        ``leave`` forwards the request as it is.
    """

    orphan_tool_call: OrphanToolCall = "pair"
    trailing_tool_call: TrailingToolCall = "pair"
    orphan_tool_result: OrphanToolResult = "fold"
    synthetic_result_text: str = DEFAULT_SYNTHETIC_RESULT
    stub_tool_description: str = DEFAULT_STUB_TOOL_DESCRIPTION
    bridge_text: str = DEFAULT_BRIDGE_TEXT
    missing_thought_signature: MissingThoughtSignature = "dummy"
    trailing_assistant: TrailingAssistant = "auto"
    trailing_thinking: TrailingThinking = "continue"
    thinking_without_history: ThinkingWithoutHistory = "disable"

    def __post_init__(self) -> None:
        if self.orphan_tool_call not in ("pair", "drop"):
            raise PolicyError(f"orphan_tool_call must be 'pair' or 'drop', not {self.orphan_tool_call!r}")
        if self.trailing_tool_call not in ("pair", "leave"):
            raise PolicyError(f"trailing_tool_call must be 'pair' or 'leave', not {self.trailing_tool_call!r}")
        if self.orphan_tool_result not in ("fold", "drop"):
            raise PolicyError(f"orphan_tool_result must be 'fold' or 'drop', not {self.orphan_tool_result!r}")
        if self.missing_thought_signature not in ("dummy", "leave"):
            raise PolicyError(
                f"missing_thought_signature must be 'dummy' or 'leave', not {self.missing_thought_signature!r}"
            )
        if self.trailing_assistant not in ("keep", "drop", "auto"):
            raise PolicyError(f"trailing_assistant must be 'keep', 'drop' or 'auto', not {self.trailing_assistant!r}")
        if self.trailing_thinking not in ("continue", "drop"):
            raise PolicyError(f"trailing_thinking must be 'continue' or 'drop', not {self.trailing_thinking!r}")
        if self.thinking_without_history not in ("disable", "leave"):
            raise PolicyError(
                f"thinking_without_history must be 'disable' or 'leave', not {self.thinking_without_history!r}"
            )
        for name in ("synthetic_result_text", "stub_tool_description", "bridge_text"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise PolicyError(f"{name} must be a non-blank string")
        try:
            used = {f for _, f, _, _ in string.Formatter().parse(self.synthetic_result_text) if f}
        except ValueError as exc:
            raise PolicyError(f"synthetic_result_text is not a valid template: {exc}") from None
        unknown = used - _TEMPLATE_FIELDS
        if unknown:
            raise PolicyError(
                "synthetic_result_text may use {name} and {id} only, not "
                + ", ".join("{" + f + "}" for f in sorted(unknown))
            )

    def synthetic_text(self, *, name: str, call_id: str) -> str:
        return self.synthetic_result_text.format(name=name or "unknown", id=call_id)

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> Policy:
        """Build a policy from plain data (config files, CLI ``KEY=VALUE`` pairs)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise PolicyError(f"unknown policy key(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**values)
