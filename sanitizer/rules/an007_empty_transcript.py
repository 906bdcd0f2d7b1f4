from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule

# The user message that stands in for a conversation whose every message was removed: it says
# what happened and asks for nothing.
PLACEHOLDER_TEXT = "(empty message)"
# Where each format keeps its system prompt outside the conversation (Anthropic and Bedrock,
# Gemini in either spelling); OpenAI Chat keeps it in ``messages``.
_SYSTEM_FIELDS = ("system", "systemInstruction", "system_instruction")
_SYSTEM_ROLES = frozenset(("system", "developer"))
# The providers that refuse a Chat body of system messages alone, by the name a repair gives them.
_SYSTEM_ALONE_REFUSED = {"zhipu": "Zhipu", "bedrock": "Bedrock", "lmstudio": "LM Studio"}


class EmptyTranscript(Rule):
    """
    What it repairs:
        A request left with no message at all once the broken ones are removed: a conversation
        whose only message was blank (content "" or "\\n"), or whose every message was an
        orphan tool result. Also a request sent with a system prompt and no message: an agent
        whose instructions are its whole prompt (pydantic-ai with instructions and no user
        prompt); in a Chat body, where the system prompt is a message, only bound for Zhipu
        (GLM) or LM Studio (Qwen3.5 and Qwen3.6 templates), which refuse a conversation with no
        user message, or for Bedrock, where a gateway makes the system messages Converse's
        system field and leaves no message.

    Why:
        Anthropic: "messages: at least one message is required"
        OpenAI: "Invalid 'messages': empty array. Expected an array with minimum length 1, but
        got an empty array instead."
        Gemini: "* GenerateContentRequest.contents: contents is not specified"
        Bedrock Converse: "A conversation must start with a user message. Try again with a
        conversation that starts with a user message." (pydantic/pydantic-ai#4495)
        Zhipu: "messages 参数非法。请检查文档。" (code 1214; HKUDS/nanobot PR#3086 reproduces it
        with a system message alone), on api.z.ai "The messages parameter is illegal. Please
        check the documentation."
        LM Studio (Qwen3.5, Qwen3.6): "Error rendering prompt with jinja template: "No user
        query found in messages."." (lmstudio-ai/lmstudio-bug-tracker#1655)

    Example:
        Before: user "   "
        After:  user "(empty message)"
        Before: system "Summarise the database result below: ..." / no messages
        After:  system "Summarise the database result below: ..." / user "(empty message)"

    Safety:
        Adds one short user message, and only when repairs emptied the conversation or the
        system prompt carries the request. A request sent with neither a message nor a system
        prompt is forwarded as it is: its prompt never reached the request, and a placeholder
        would hide that.
    """

    code = "AN007"
    name = "empty-transcript"
    apis = frozenset({"anthropic-messages", "openai-chat", "gemini", "bedrock-converse"})
    fixes: ClassVar[tuple[str, ...]] = (
        "anthropic.A20",
        "openai.O5",
        "gemini.G6",
        "bedrock.B8",
        "zhipu.1214-no-user-message",
        "lmstudio.no-user-query",
    )

    def looks_past(self, api: str, provider: str | None) -> bool:
        # A Chat body of system messages alone is valid OpenAI: the format's check passes it.
        return api == "openai-chat" and provider in _SYSTEM_ALONE_REFUSED

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat body bound for Zhipu, LM Studio or Bedrock (looks_past); an empty list is
        # left as it is.
        messages = body["messages"]
        return not messages or any(m.get("role") not in _SYSTEM_ROLES for m in messages)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        refused_by = _SYSTEM_ALONE_REFUSED.get(ctx.provider or "") if ctx.api == "openai-chat" else None
        if refused_by is not None and transcript.entries:
            if all(e.role in _SYSTEM_ROLES for e in transcript.entries):
                transcript.entries = [*transcript.entries, ctx.dialect.text_entry("user", PLACEHOLDER_TEXT)]
                why = f"{refused_by} refuses a conversation of system messages alone"
                ctx.report(self, "added", None, None, f"added the user message {PLACEHOLDER_TEXT!r}: {why}")
            return
        if transcript.entries:
            return
        emptied = bool(transcript.body.get(transcript.key))
        if not emptied and not any(transcript.field(name) for name in _SYSTEM_FIELDS):
            return
        transcript.entries = [ctx.dialect.text_entry("user", PLACEHOLDER_TEXT)]
        why = (
            "every message of the conversation was removed as empty or unanswerable"
            if emptied
            else "the request had a system prompt and no message"
        )
        ctx.report(self, "added", None, None, f"added the user message {PLACEHOLDER_TEXT!r}: {why}")
