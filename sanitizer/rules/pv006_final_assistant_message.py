from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Entry, Transcript
from ..validation._openai_chat import deepseek_reasoner
from ._base import Context, Rule, quoted_content
from ._items import no_bridged_message
from .an009_unsupported_prefill import CONTINUE_TEXT

_SYSTEM = frozenset({"system", "developer"})


class FinalAssistantMessage(Rule):
    """
    What it repairs:
        A request that ends on an assistant message without ``prefix: true``, bound for a
        provider that takes a final assistant message only in prefix mode: DeepSeek's reasoner
        (system messages after that assistant turn do not count as the end: a client that puts
        its system prompt or a tool's output last) and Mistral; or one that ends on a model turn
        bound for Gemini, which takes none. The assistant message may be a prompt the
        workflow's author wrote, a cached answer, an interrupted answer.

    Why:
        DeepSeek: "The last message of deepseek-reasoner must be a user message, or an assistant
        message with prefix mode on (refer to
        https://api-docs.deepseek.com/guides/chat_prefix_completion)."
        Mistral: "Expected last role User or Tool (or Assistant with prefix True) for serving but
        got assistant"
        Gemini: "Requests ending with a model turn are not supported." (anomalyco/opencode#47034)

    Example:
        Before (model deepseek-reasoner): user "prompt" / assistant "cached answer" /
                system "You are a professional assistant."
        After:  user "prompt" / assistant "cached answer" /
                system "You are a professional assistant." / user "Continue."

    Safety:
        With policy trailing_assistant ``auto`` (default), a user message "Continue." is added
        at the end and nothing is dropped: the model goes on from the assistant's text, which is
        what a final assistant message asks for. Turning on prefix mode instead is not done: it
        is a beta of DeepSeek's that needs another endpoint. ``drop`` removes the final assistant
        message(s) instead, keeping their text in the repair record, except where that would
        lose reasoning (reasoning_content, thinking) or leave no user message, or where system
        messages follow it
        (they refer to it): "Continue." is added then. ``keep`` leaves the request as it is. A
        final turn with tool calls (left for the client by trailing_tool_call ``leave``) is left
        alone.
    """

    code = "PV006"
    name = "final-assistant-message"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"deepseek", "mistral"})
    also_for = frozenset({("openai-chat", "gemini"), ("openai-responses", "mistral"), ("openai-responses", "deepseek")})
    fixes: ClassVar[tuple[str, ...]] = ("deepseek.D5", "mistral.M4", "gemini.G7")

    def applies_to(self, api: str, provider: str | None = None) -> bool:
        # Native Gemini bodies, whoever serves them (the Gemini API, Vertex).
        return api == "gemini" or super().applies_to(api, provider)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        if ctx.api == "openai-responses":
            # Bridged to a Chat provider: the full pass looks at any list of items.
            return type(body.get("input")) is not list
        deepseek = ctx.provider == "deepseek"
        gemini = ctx.api == "gemini" or ctx.provider == "gemini"
        if ctx.policy.trailing_assistant == "keep" or (deepseek and not deepseek_reasoner(body)):
            return True
        messages = body["messages"]
        last = len(messages) - 1
        if deepseek or gemini:
            while last >= 0 and messages[last].get("role") in _SYSTEM:
                last -= 1
        if last < 0:
            return True
        final = messages[last]
        # As _open(), on the message itself.
        return (
            final.get("role") != "assistant"
            or bool(final.get("tool_calls"))
            or (not gemini and final.get("prefix") is True)
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        mode = ctx.policy.trailing_assistant
        deepseek = ctx.provider == "deepseek"
        # Gemini has no prefix mode, and a gateway lifts Chat system messages out of its turns.
        gemini = ctx.api == "gemini" or ctx.provider == "gemini"
        if mode == "keep" or (deepseek and not deepseek_reasoner(transcript.body)):
            return
        entries = transcript.entries
        last = len(entries) - 1
        # What follows the final message: system messages, which a gateway lifts out of the turns
        # (DeepSeek, Gemini), and reasoning items without text, which LiteLLM's Responses bridge makes none of.
        while last >= 0 and (
            ((deepseek or gemini) and entries[last].role in _SYSTEM) or no_bridged_message(entries[last], ctx.api)
        ):
            last -= 1
        if last < 0 or not _open(entries[last], gemini):
            return
        start = last
        while start and _open(entries[start - 1], gemini):
            start -= 1
        run = entries[start : last + 1]
        keeps = [
            why
            for why, applies in (
                ("holds reasoning_content", any("reasoning_content" in e.source for e in run)),
                ("holds thinking", any(_thinks(e) for e in run)),
                ("is followed by system messages", any(e.role in _SYSTEM for e in entries[last + 1 :])),
                ("has no user message before it", not any(e.role == "user" for e in entries[:start])),
            )
            if applies
        ]
        if mode == "drop" and not keeps:
            for entry in run:
                ctx.report(
                    self,
                    "dropped",
                    entry,
                    None,
                    "removed the final assistant message (policy "
                    f"trailing_assistant is drop); it said: {quoted_content(entry)}",
                )
            transcript.entries = entries[:start]
            return
        why = (
            "Gemini takes no request that ends with a model turn"
            if gemini
            else "the provider takes a final assistant message only in prefix mode"
        )
        if mode == "drop":
            why += f"; it is not dropped because it {' and '.join(keeps)}"
        ctx.report(self, "added", entries[last], None, f"added a user message {CONTINUE_TEXT!r} at the end ({why})")
        transcript.entries = [*entries, ctx.dialect.text_entry("user", CONTINUE_TEXT)]


def _thinks(entry: Entry) -> bool:
    return any(part.kind == THINKING for part in entry.parts)


def _open(entry: Entry, no_prefix_mode: bool = False) -> bool:
    """An assistant message a request may not end on: no prefix flag (where the provider has a
    prefix mode), no calls left to the client."""
    if entry.role != "assistant" or entry.calls():
        return False
    return no_prefix_mode or entry.source.get("prefix") is not True
