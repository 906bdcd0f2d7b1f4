from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule


class EmptyMessage(Rule):
    """
    What it repairs:
        A message with no content: ``content: []`` or ``content: ""`` (an assistant turn stored
        after an empty end_turn, a user message with nothing typed, or one emptied by another
        repair).

    Why:
        Anthropic: "messages.2: all messages must have non-empty content except for the
        optional final assistant message"
        Gemini: "* GenerateContentRequest.contents[2].parts: contents.parts must not be empty."
        Bedrock: "The content field in the Message object at messages.2 is empty. Add a
        ContentBlock object to the content field and try again."
        vLLM, Mistral models (mistral-common): "Invalid assistant message: role='assistant'
        content=None tool_calls=None prefix=False"

    Example:
        Before: user "hi" / assistant [] / user "are you there?"
        After:  user "hi" / user "are you there?"   (Anthropic merges consecutive user turns)

    Safety:
        Removes only messages that hold nothing. Anthropic's final assistant message is left
        alone, since that API allows it to be empty.
    """

    code = "AN003"
    name = "empty-message"
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A5", "bedrock.B6", "gemini.G5", "mistral.M5")
    apis = frozenset({"anthropic-messages", "gemini", "bedrock-converse"})
    also_for = frozenset(
        {("openai-chat", "anthropic"), ("openai-chat", "bedrock"), ("openai-chat", "gemini"), ("openai-chat", "vllm")}
    )

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of a Chat body bound elsewhere (for the other formats it is their own).
        # Only an assistant's tool_calls are calls: on any other message the parse leaves them.
        return ctx.api == "openai-chat" and not any(
            m.get("role") != "tool"
            and m.get("content") in (None, "", [])
            and not (m.get("tool_calls") and m.get("role") == "assistant")
            for m in body["messages"]
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries = transcript.entries
        kept = []
        for index, entry in enumerate(entries):
            exempt = ctx.dialect.empty_final_assistant_ok and index == len(entries) - 1 and entry.role == "assistant"
            if entry.parts or exempt:
                kept.append(entry)
            else:
                ctx.report(self, "removed", entry, None, f"removed an empty {entry.role} message")
        transcript.entries = kept
