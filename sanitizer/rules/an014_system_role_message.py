from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Transcript
from ._base import Context, Rule
from ._system_messages import settle, settled


class SystemRoleMessage(Rule):
    """
    What it repairs:
        A message with role ``system`` inside ``messages`` that the model does not take there:
        a harness's mid-conversation reminder (Claude Code's "Available agent types...") sent to a
        model before Claude Opus 4.8, or to Bedrock's or Vertex's endpoints; an OpenAI-style history
        whose system prompt opens ``messages``; and, on a model that does take them, one placed
        where Anthropic refuses it. Claude Opus 4.8 and later (the capability table,
        ``sanitizer.capabilities``) take a run of system messages that follows a user message (or an
        assistant message ending in a server tool's use or result) and is last or followed by an
        assistant message: those are left exactly as sent, so the request goes on byte for byte
        and its cached prefix with it. A request's ``anthropic-beta`` values count only where it
        names no model.

    Why:
        Anthropic, for a model before Opus 4.8: "role 'system' is not supported on this model"
        (earlier: "messages: Unexpected role "system". The Messages API accepts a top-level
        `system` parameter, not "system" as an input message role."). For a system message
        placed elsewhere on a model that takes them: "role 'system' must follow a 'user' message
        or an 'assistant' message ending in a server tool result" (it must also be last or
        followed by an assistant message, and is never first: platform.claude.com,
        Mid-conversation system messages).

    Example:
        Before (claude-sonnet-4-5): user "Fix the test" / system "Available agent types: ..." /
                assistant "On it"
        After:  user ["Fix the test", "<system-reminder>\\nAvailable agent types: ...\\n</system-reminder>"] /
                assistant "On it"
        Before (claude-opus-4-8): the same request
        After:  unchanged
        Before: system "Be brief." / user "hi"  (no top-level system)
        After:  top-level system "Be brief." / user "hi"

    Safety:
        Nothing is dropped but a blank system message. A system message is kept where it was
        said: its texts join the user message before it (or, after an assistant message, the user
        message after it, after that message's tool results; or a user message of their own),
        each wrapped as Claude Code wraps its own reminders for a model without them
        (``<system-reminder>`` tags, once), other keys (``cache_control``) kept. The model reads
        them as the user's turn, not the operator's, but everything before that turn is unchanged
        and its cache still hits. Hoisting them into the top-level system instead would change
        the start of the prompt on every turn. Only system messages that open the conversation,
        before any user or assistant message, become the top-level system prompt (after the one
        the request has, as they would read): there they were the system prompt already. Blocks
        the top-level field cannot hold (an image) stay where they were, in a user message.
    """

    code = "AN014"
    name = "system-role-message"
    apis = frozenset({"anthropic-messages"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A10-system", "anthropic.system-placement")
    judges_suspicion = True

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Suspected for every system message: they stay on a model that takes them, each run placed.
        return settled(body, ctx)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        settle(self, transcript, ctx)
