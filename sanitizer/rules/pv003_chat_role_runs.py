from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Entry, Transcript
from ._base import Context, Rule


class ChatRoleRuns(Rule):
    """
    What it repairs:
        Consecutive messages of one role in an OpenAI Chat body bound for a provider that does
        not take them: the interrupt-recovery assistant message after a partial answer, or two
        user messages left by a dropped turn. For Gemini only runs that end in a tool call
        matter; Bedrock takes no run at all.

    Why:
        Bedrock: "A conversation must alternate between user and assistant roles. Make sure
        the conversation alternates between user and assistant roles and try again."
        Gemini: "Please ensure that function call turn comes immediately after a user turn or
        after a function response turn."

    Example:
        Before (bound for Bedrock): user "go" / assistant "partial" / assistant "I noticed
                that you have interrupted me." / user "stop"
        After:  user "go" / assistant "partial\\n\\nI noticed that you have interrupted me." /
                user "stop"

    Safety:
        Merges the messages in order (texts joined by a blank line, tool calls kept);
        nothing is dropped. System messages, which the gateway lifts out of the turns, do not
        break a run; those inside a merged run are placed before it. The thinking a gateway
        replays (``thinking_blocks``, ``reasoning_content``) of every merged message is kept,
        in order, on the merged one; no thinking block is edited.
    """

    code = "PV003"
    name = "chat-role-runs"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"bedrock", "gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G1",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        speaking = None
        for m in body["messages"]:
            role = m.get("role")
            if role in _LIFTED:
                continue
            if (
                role == speaking
                and role in ("user", "assistant")
                and (ctx.provider == "bedrock" or m.get("tool_calls"))
            ):
                return False
            speaking = role
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # The gateway lifts system and developer messages out of the turns (Gemini's
        # systemInstruction, Bedrock's system), so they do not separate a run.
        runs: list[list[Entry]] = []
        speaking: str | None = None
        for entry in transcript.entries:
            lifted = entry.role in _LIFTED
            if runs and (lifted or (entry.role == speaking and entry.role in ("user", "assistant"))):
                runs[-1].append(entry)
            else:
                runs.append([entry])
            if not lifted:
                speaking = entry.role
        entries: list[Entry] = []
        for run in runs:
            speakers = [e for e in run if e.role not in _LIFTED]
            later = speakers[1:]
            if later and (ctx.provider == "bedrock" or any(e.calls() for e in later)):
                head = speakers[0]
                for entry in later:
                    ctx.report(self, "merged", entry, None, f"merged into the {entry.role} message before it")
                head.parts = head.parts + [p for entry in later for p in entry.parts]
                head.source = {**head.source, **_thinking_of(speakers)}
                head.dirty = True
                # System messages inside the run go before it: the gateway lifts them out anyway.
                entries += [e for e in run if e.role in _LIFTED] + [head]
            else:
                entries += run
        transcript.entries = entries


_LIFTED = frozenset({"system", "developer"})


def _thinking_of(speakers: list[Entry]) -> dict[str, Any]:
    """The thinking fields of the merged message: every speaker's, in order (LiteLLM sends an
    assistant message's ``thinking_blocks`` to Claude as its leading thinking blocks)."""
    fields: dict[str, Any] = {}
    blocks = [b for e in speakers if isinstance(t := e.source.get("thinking_blocks"), list) for b in t]
    if blocks:
        fields["thinking_blocks"] = blocks
    reasoning = [r for e in speakers if isinstance(r := e.source.get("reasoning_content"), str) and r]
    if reasoning:
        fields["reasoning_content"] = "\n\n".join(reasoning)
    return fields
