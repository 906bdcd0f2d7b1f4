from __future__ import annotations

from .._ir import RESULT, Entry, Transcript
from ._base import Context, Rule


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
        bridge_text) goes between them instead.
    """

    code = "BR002"
    name = "consecutive-same-role"
    apis = frozenset({"bedrock-converse"})
    also_for = frozenset({("anthropic-messages", "mistral")})

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        merged: list[Entry] = []
        for entry in transcript.entries:
            previous = merged[-1] if merged else None
            if previous is None or previous.role != entry.role:
                merged.append(entry)
                continue
            if entry.role == "user" and (_has_results(previous) or _has_results(entry)):
                ctx.report(self, "bridged", entry, None, "put a short assistant message between a results turn "
                           "and the user's next message")
                merged += [ctx.dialect.text_entry("assistant", ctx.policy.bridge_text), entry]
                continue
            ctx.report(self, "merged", entry, None, f"merged into the {entry.role} message before it")
            previous.parts = previous.parts + entry.parts
            previous.dirty = True
        transcript.entries = merged


def _has_results(entry: Entry) -> bool:
    return any(p.kind == RESULT for p in entry.parts)
