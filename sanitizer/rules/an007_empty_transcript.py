from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule

# The user message that stands in for a conversation whose every message was removed: it says
# what happened and asks for nothing.
PLACEHOLDER_TEXT = "(empty message)"


class EmptyTranscript(Rule):
    """
    What it repairs:
        A request left with no message at all once the broken ones are removed: a conversation
        whose only message was blank (content "" or "\\n"), or whose every message was an
        orphan tool result.

    Why:
        Anthropic: "messages: at least one message is required"
        OpenAI: "Invalid 'messages': empty array. Expected an array with minimum length 1, but
        got an empty array instead."
        Gemini: "* GenerateContentRequest.contents: contents is not specified"

    Example:
        Before: user "   "
        After:  user "(empty message)"

    Safety:
        Adds one short user message and only when repairs emptied the conversation. A request
        sent with no messages at all is forwarded as it is: its prompt never reached the
        request, and a placeholder would hide that.
    """

    code = "AN007"
    name = "empty-transcript"
    apis = frozenset({"anthropic-messages", "openai-chat", "gemini", "bedrock-converse"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A20", "openai.O5", "gemini.G6")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if transcript.entries or not transcript.body.get(transcript.key):
            return
        transcript.entries = [ctx.dialect.text_entry("user", PLACEHOLDER_TEXT)]
        ctx.report(
            self,
            "added",
            None,
            None,
            f"added the user message {PLACEHOLDER_TEXT!r}: every message "
            "of the conversation was removed as empty or unanswerable",
        )
