from __future__ import annotations

from itertools import pairwise
from typing import Any, ClassVar

from .._ir import RESULT, Entry, Transcript
from ._base import Context, Rule
from ._thinking import thinking_first


class ConsecutiveSameRole(Rule):
    """
    What it repairs:
        Two messages of the same role in a row: an interrupt-recovery assistant message after
        a partial answer, the user's correction after a results turn, a message left out by
        the framework.

    Why:
        Bedrock Converse does not merge turns: "A conversation must alternate between user
        and assistant roles. Make sure the conversation alternates between user and assistant
        roles and try again."

    Example:
        Before: user "go" / assistant "partial" / assistant "I noticed that you have interrupted me." /
                user "stop"
        After:  user "go" / assistant ["partial", "I noticed that you have interrupted me."] /
                user "stop"

    Safety:
        Merges the two messages' blocks in order. A results turn is never merged with the
        user's text (Converse rejects that too): a short assistant message (the policy's
        bridge_text) goes between them instead. Two results turns are merged: they answer the
        same calls, and a bridge between them would part the later results from their calls.
        When the later message opens with thinking (reasoning) blocks and the earlier does not,
        they go first in the merged message, as Claude requires of any message that holds
        thinking; no thinking block is edited.
    """

    code = "BR002"
    name = "consecutive-same-role"
    apis = frozenset({"bedrock-converse"})
    also_for = frozenset({("anthropic-messages", "mistral")})
    fixes: ClassVar[tuple[str, ...]] = ("bedrock.B7", "anthropic.thinking-first")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Asked only of an Anthropic body bound for Mistral (in Converse it is one of the format's own).
        roles = [m.get("role") for m in body["messages"]]
        return ctx.api == "anthropic-messages" and not any(a == b for a, b in pairwise(roles))

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        merged: list[Entry] = []
        # What merging has made of the last message so far, tracked as it grows so a long run
        # of merges costs no rescans: whether it holds tool results, and whether its parts list
        # is one this rule built (and may extend in place).
        holds_results = grown = False
        grew: list[Entry] = []
        for entry in transcript.entries:
            previous = merged[-1] if merged else None
            has_results = _has_results(entry)
            if previous is None or previous.role != entry.role:
                merged.append(entry)
                holds_results, grown = has_results, False
                continue
            if entry.role == "user" and holds_results != has_results:
                ctx.report(
                    self,
                    "bridged",
                    entry,
                    None,
                    "put a short assistant message between a results turn and the user's next message",
                )
                merged += [ctx.dialect.text_entry("assistant", ctx.policy.bridge_text), entry]
                holds_results, grown = has_results, False
                continue
            ctx.report(self, "merged", entry, None, f"merged into the {entry.role} message before it")
            if grown:
                previous.parts.extend(entry.parts)
            else:
                previous.parts = previous.parts + entry.parts
                grown = True
                grew.append(previous)
            holds_results = holds_results or has_results
            previous.dirty = True
        transcript.entries = merged
        # Once per merged message, not per merge, so a long run stays linear.
        for entry in grew:
            entry.parts = thinking_first(entry.parts) or entry.parts


def _has_results(entry: Entry) -> bool:
    return any(p.kind == RESULT for p in entry.parts)
