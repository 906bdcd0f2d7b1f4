from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, Part, Transcript
from ._base import Context, Rule

PLACEHOLDER_NAME = "unknown_tool"
"""The name an unnamed call is given: the one Suture's stub tool definitions use for it too."""


class UnnamedToolCall(Rule):
    """
    What it repairs:
        A tool call replayed with an empty name, in OpenAI Chat (``function.name: ""``) or
        Responses (a ``function_call`` or ``custom_tool_call`` with ``name: ""``): a relay or
        converter that lost the name on the way (the call of a tool it does not map, a
        namespaced or searched-for tool), or a client that rebuilt the call from its id.

    Why:
        OpenAI Responses: "Invalid 'input[26].name': empty string. Expected a string with
        minimum length 1, but got an empty string instead." (Wei-Shaw/sub2api#3818); OpenAI
        Chat: "Invalid 'messages[1].tool_calls[0].function.name': empty string. Expected a
        string with minimum length 1, but got an empty string instead."

    Example:
        Before: assistant calls "" (call_1) with the arguments {"path": "a.txt"} / tool
                result call_1 "contents of a.txt"
        After:  assistant calls unknown_tool (call_1) with the arguments {"path": "a.txt"} /
                tool result call_1 "contents of a.txt"

    Safety:
        Only the empty name changes: the call's id, arguments and result stay, so the model
        still reads what was asked and what came back. The name it gets says the name was
        lost rather than inventing one, and is the name Suture's stub tool definition gives
        such a call where a provider wants every called tool declared. A name that is not
        empty, or not a string, is left as it is.
    """

    code = "OA007"
    name = "unnamed-tool-call"
    apis = frozenset({"openai-chat", "openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O5", "responses.R14")

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        chat = ctx.api == "openai-chat"
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != CALL:
                    continue
                raw: dict[str, Any] = part.raw
                holder = raw.get("function") if chat else raw
                if not isinstance(holder, dict) or holder.get("name") != "":
                    continue
                named = {**holder, "name": PLACEHOLDER_NAME}
                renamed = {**raw, "function": named} if chat else named
                entry.parts[n] = Part(CALL, renamed, part.call_id, PLACEHOLDER_NAME)
                entry.dirty = True
                detail = f"named a tool call sent without a name {PLACEHOLDER_NAME!r}"
                ctx.report(self, "renamed", entry, part.call_id, detail)
