from __future__ import annotations

from typing import ClassVar

from .._ir import Transcript
from ._base import Context, Rule


class FunctionCallWithoutArguments(Rule):
    """
    What it repairs:
        An assistant message's legacy ``function_call`` (the functions API, before tool
        calls) without ``arguments``: a client that builds the call from its name alone, for a
        function that takes no arguments or one whose arguments it did not keep.

    Why:
        OpenAI and Azure: "Missing required parameter:
        'messages[2].function_call.arguments'." (BerriAI/litellm#6241, Azure)

    Example:
        Before: user "What is the weather in Copenhagen?" /
                assistant {"function_call": {"name": "get_weather"}}
        After:  user "What is the weather in Copenhagen?" /
                assistant {"function_call": {"name": "get_weather", "arguments": "{}"}}

    Safety:
        Adds ``"arguments": "{}"``, the text of an empty argument object, and nothing else:
        the call had no arguments to lose. The call's name, the message's content and any
        ``function`` message answering it are untouched. Arguments that are there, whatever
        their value, are left to the provider.
    """

    code = "OA004"
    name = "function-call-without-arguments"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O11",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            function_call = entry.source.get("function_call")
            if entry.role != "assistant" or not isinstance(function_call, dict) or "arguments" in function_call:
                continue
            entry.source = {**entry.source, "function_call": {**function_call, "arguments": "{}"}}
            entry.dirty = True
            detail = "gave a legacy function_call without arguments the empty arguments '{}'"
            ctx.report(self, "added", entry, None, detail)
