from __future__ import annotations

import json
from typing import Any, ClassVar

from .._ir import CALL, Part, Transcript
from ._base import Context, Rule


class ToolArgumentsNotString(Rule):
    """
    What it repairs:
        A Chat tool call whose ``function.arguments`` is the object (or array) itself rather
        than its JSON text: a client or gateway that keeps the arguments parsed and sends them
        back that way (Portkey's Bedrock mapping answered calls with object arguments,
        Portkey-AI/gateway#768; the agent then replays them as they came).

    Why:
        OpenAI: "Invalid type for 'messages[2].tool_calls[0].function.arguments': expected a
        string, but got an object instead." (aaif-goose/goose-mobile PR#20), on every request
        from then on, since the call stays in the history.

    Example:
        Before: assistant calls get_weather with the arguments {"city": "Copenhagen"}
                (an object)
        After:  assistant calls get_weather with the arguments "{\\"city\\":\\"Copenhagen\\"}"
                (its JSON text)

    Safety:
        The arguments become their own JSON text, compact, every key and value as it was:
        the model reads exactly the same call. Arguments that are text (whatever the text),
        missing, or another JSON value are left as they are. The call's id, name and result
        are untouched. For every provider the body is bound for: the Chat format defines the
        arguments as text, and a provider that parses them reads the same object.
    """

    code = "OA006"
    name = "tool-arguments-not-string"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O13",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        for message in body["messages"]:
            for call in message.get("tool_calls") or ():
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and type(function.get("arguments")) in (dict, list):
                    return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != CALL:
                    continue
                function = part.raw.get("function") if isinstance(part.raw, dict) else None
                if not isinstance(function, dict) or type(function.get("arguments")) not in (dict, list):
                    continue
                arguments = function["arguments"]
                try:
                    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
                except (ValueError, RecursionError):
                    continue  # NaN, or nested past what can be written: left to the provider
                entry.parts[n] = Part(
                    CALL, {**part.raw, "function": {**function, "arguments": text}}, part.call_id, part.name
                )
                entry.dirty = True
                kind = "an object" if type(arguments) is dict else "an array"
                detail = f"encoded tool call arguments sent as {kind} as their JSON text"
                ctx.report(self, "encoded", entry, part.call_id, detail)
