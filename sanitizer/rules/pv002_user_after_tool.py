from __future__ import annotations

from itertools import pairwise
from typing import Any, ClassVar

from .._ir import Entry, Transcript
from ._base import Context, Rule
from ._items import no_bridged_message


class UserAfterTool(Rule):
    """
    What it repairs:
        A user message right after the tool results, in an OpenAI Chat body bound for a
        provider that wants the assistant to speak in between: the user's correction after
        an interrupted (and now answered) call.

    Why:
        Mistral: "Unexpected role 'user' after role 'tool'"
        Bedrock (through a gateway, which puts both in one turn): "messages.2.content:
        Conversation blocks and tool result blocks cannot be provided in the same turn."

    Example:
        Before: assistant calls get_weather / tool result / user "stop, answer 42"
        After:  assistant calls get_weather / tool result / assistant "(Tool results received.)" /
                user "stop, answer 42"

    Safety:
        Adds one short assistant message (the policy's ``bridge_text``); drops nothing.
    """

    code = "PV002"
    name = "user-after-tool"
    fixes: ClassVar[tuple[str, ...]] = ("mistral.M3",)
    apis = frozenset({"openai-chat"})
    providers = frozenset({"mistral", "bedrock"})
    # A Responses body LiteLLM bridges to Mistral: its outputs become tool messages there.
    also_for = frozenset({("openai-responses", "mistral")})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        if ctx.api == "openai-responses":
            # Outputs are items without a role: the full pass looks at any list of items.
            return type(body.get("input")) is not list
        roles = [m.get("role") for m in body["messages"]]
        return not any(a == "tool" and b == "user" for a, b in pairwise(roles))

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        entries: list[Entry] = []
        previous: str | None = None
        for entry in transcript.entries:
            if entry.role == "user" and previous == "tool":
                ctx.report(
                    self,
                    "bridged",
                    entry,
                    None,
                    "put a short assistant message between the tool results and this user message",
                )
                entries.append(ctx.dialect.text_entry("assistant", ctx.policy.bridge_text))
            entries.append(entry)
            if not no_bridged_message(entry, ctx.api):
                previous = entry.role
        transcript.entries = entries
