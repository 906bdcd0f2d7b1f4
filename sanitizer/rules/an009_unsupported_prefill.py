from __future__ import annotations

import re
from fnmatch import translate
from typing import Any, ClassVar

from .._ir import CALL, SERVER_CALL, SERVER_RESULT, THINKING, Entry, Transcript
from ._base import Context, Rule, quoted_content

# Models that answer a request ending on an assistant message with "This model does not support
# assistant message prefill": Claude Opus 4.6, 4.7 and 4.8 and Sonnet 4.6 (ericc-ch/copilot-api
# PR#261, opencode-dynamic-context-pruning#520), Sonnet 5 (cortexkit/magic-context#511), Fable 5
# (vybestack/llxprt-code#1977). Glob patterns matched against the lower-cased model name: the
# leading * takes the prefixes of Bedrock ("us.anthropic."), gateways ("anthropic/",
# "antigravity/") and the trailing one dates and suffixes ("@20260101", "-thinking"); OpenRouter
# writes versions with a dot. When another model refuses prefill, add its pattern here.
NO_PREFILL_MODELS: tuple[str, ...] = (
    "*claude-opus-4[.-]6*",
    "*claude-opus-4[.-]7*",
    "*claude-opus-4[.-]8*",
    "*claude-sonnet-4[.-]6*",
    "*claude-sonnet-5*",
    "*claude-fable-5*",
)

# One expression for the whole table: the fast path asks about every request that ends on an
# assistant message.
_NO_PREFILL = re.compile("|".join(translate(pattern) for pattern in NO_PREFILL_MODELS))

# The user turn added after a final assistant message that cannot be dropped: short, and asking
# for nothing but what the model was doing anyway.
CONTINUE_TEXT = "Continue."


def refuses_prefill(model: str | None) -> bool:
    """Whether ``model`` is one the table above knows to reject a final assistant message."""
    if not model:
        return False
    return _NO_PREFILL.match(model.lower()) is not None


class UnsupportedPrefill(Rule):
    """
    What it repairs:
        A request that ends on an assistant message, sent to a model that does not take
        assistant prefill: an interrupted answer stored as the last turn, a context-pruning
        plugin or a subagent that leaves the history ending on the assistant, a client that
        prefills the answer. Policy ``trailing_assistant``: ``auto`` (default) for the models
        in the NO_PREFILL_MODELS table (Claude Opus 4.6 to 4.8, Sonnet 4.6, Sonnet 5, Fable 5)
        and, for a body bound for Mistral (through LiteLLM's adapter, which has no way to send
        Mistral's ``prefix: true``), every model; ``drop`` for every model, ``keep`` never.

    Why:
        Anthropic: "This model does not support assistant message prefill. The conversation
        must end with a user message."
        Mistral: "Expected last role User or Tool (or Assistant with prefix True) for serving
        but got assistant"

    Example:
        Before (model claude-sonnet-4-6): user "Summarise the file" / assistant "The file"
        After:  user "Summarise the file"

    Safety:
        The removed message's content is kept, verbatim, in the repair record. Consecutive
        assistant messages at the end are one turn to the API and go together. A final turn
        that calls tools (left for the client by trailing_tool_call ``leave``) or waits on a
        server tool (``pause_turn``; not when bound for Mistral, which has none) is left
        alone. A final turn that holds thinking blocks is never dropped (thinking is never
        removed), nor is one that is the whole conversation: a user message "Continue." is
        added after it instead, as it is under ``auto`` for a body bound for Mistral (the
        message may be a prompt its author wrote).
    """

    code = "AN009"
    looks_past_format = True
    name = "unsupported-prefill"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A17", "mistral.M4")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # A valid prefill on one model is a 400 on another, and the policy decides whether it goes:
        # neither is the body's to say. One look at the last message.
        mode = ctx.policy.trailing_assistant
        last = body["messages"][-1]
        if mode == "keep" or last.get("role") != "assistant":
            return True
        return mode == "auto" and not refuses_prefill(ctx.model) and ctx.provider != "mistral"

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        mode = ctx.policy.trailing_assistant
        if mode == "keep" or (mode == "auto" and not (refuses_prefill(ctx.model) or ctx.provider == "mistral")):
            return
        entries = transcript.entries
        start = len(entries)
        while start and entries[start - 1].role == "assistant":
            start -= 1
        run = entries[start:]
        # Mistral has no server tools: a turn paused on one cannot go on there.
        in_flight = (CALL,) if ctx.provider == "mistral" else _IN_FLIGHT
        if not run or any(p.kind in in_flight for e in run for p in e.parts):
            return
        # Mistral takes a final assistant message in prefix mode only, which LiteLLM's adapter
        # cannot ask for; as for a Chat body bound there (FinalAssistantMessage), auto keeps what
        # may be a prompt its author wrote and asks the model to go on.
        prefix_only = mode == "auto" and ctx.provider == "mistral" and not refuses_prefill(ctx.model)
        why = "policy trailing_assistant is drop"
        if mode == "auto":
            why = (
                "Mistral takes it only in prefix mode, which LiteLLM's adapter cannot ask for"
                if prefix_only
                else "the model does not take assistant prefill"
            )
        kept = [e for e in run if e.parts]
        if kept and (prefix_only or start == 0 or any(e.has(THINKING) for e in kept)):
            for entry in run:
                if not entry.parts:
                    # Only a final assistant message may be empty, and this one no longer is final.
                    ctx.report(
                        self,
                        "removed",
                        entry,
                        None,
                        "removed an empty assistant message that a user message now follows",
                    )
            ctx.report(
                self,
                "added",
                kept[-1],
                None,
                f"added a user message {CONTINUE_TEXT!r} after the final "
                f"assistant message, which is kept {_kept_because(kept, prefix_only)} ({why})",
            )
            transcript.entries = [*entries[:start], *kept, ctx.dialect.text_entry("user", CONTINUE_TEXT)]
            return
        for entry in run:
            ctx.report(
                self,
                "dropped",
                entry,
                None,
                f"removed the final assistant message ({why}); it said: {quoted_content(entry)}",
            )
        transcript.entries = entries[:start]


# Calls the client still has to answer, and a server tool paused mid-turn, belong in the last turn.
_IN_FLIGHT = frozenset((CALL, SERVER_CALL, SERVER_RESULT))


def _kept_because(run: list[Entry], prefix_only: bool) -> str:
    if any(e.has(THINKING) for e in run):
        return "because it holds thinking blocks"
    return "as a prompt its author may have written" if prefix_only else "because it is the whole conversation"
