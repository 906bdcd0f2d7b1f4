from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule

# The user message that stands in for a conversation whose every message was removed: it says
# what happened and asks for nothing.
PLACEHOLDER_TEXT = "(empty message)"
# Where each format keeps its system prompt outside the conversation (Anthropic and Bedrock,
# Gemini in either spelling); OpenAI Chat keeps it in ``messages``.
_SYSTEM_FIELDS = ("system", "systemInstruction", "system_instruction")


class EmptyTranscript(Rule):
    """
    What it repairs:
        A request left with no message at all once the broken ones are removed: a conversation
        whose only message was blank (content "" or "\\n"), or whose every message was an
        orphan tool result. Also a request sent with a system prompt and no message: an agent
        whose instructions are its whole prompt (pydantic-ai with instructions and no user
        prompt).

    Why:
        Anthropic: "messages: at least one message is required"
        OpenAI: "Invalid 'messages': empty array. Expected an array with minimum length 1, but
        got an empty array instead."
        Gemini: "* GenerateContentRequest.contents: contents is not specified"
        Bedrock Converse: "A conversation must start with a user message. Try again with a
        conversation that starts with a user message." (pydantic/pydantic-ai#4495)

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
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A20", "openai.O5", "gemini.G6", "bedrock.B8")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
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
