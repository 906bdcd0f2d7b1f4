from __future__ import annotations

import json
from typing import ClassVar

from .._ir import OTHER, Part, Transcript
from ._base import Context, Rule


class ToolSearchArgumentsNotObject(Rule):
    """
    What it repairs:
        An OpenAI Responses ``tool_search_call`` item (the hosted tool search, which loads
        deferred tools) replayed with its ``arguments`` as their JSON text: a relay or client
        that handles every call's arguments as text, as a ``function_call``'s are, and
        stringifies this item's too.

    Why:
        The tool search call is the one item whose arguments OpenAI takes only as an object.
        OpenAI: "Invalid type for 'input[40].arguments': expected an object, but got a string
        instead." (Wei-Shaw/sub2api#3818, Codex desktop through the relay), on every turn of
        the session from then on.

    Example:
        Before: user "find the deploy tool" / tool_search_call tsc_1 with the arguments
                "{\\"query\\": \\"deploy\\"}"  (text) / tool_search_output tso_1
        After:  user "find the deploy tool" / tool_search_call tsc_1 with the arguments
                {"query": "deploy"}  (the object) / tool_search_output tso_1

    Safety:
        The text is parsed back into the object it holds, every key and value as it was.
        Text that is not the JSON of an object is left as it is (there is no object to give
        back), as are arguments that are already an object. Only ``tool_search_call`` items:
        a ``function_call``'s arguments are text by the format's own definition.
    """

    code = "RS011"
    name = "tool-search-arguments-not-object"
    apis = frozenset({"openai-responses"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R13",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            for n, part in enumerate(entry.parts):
                if part.kind != OTHER or part.raw.get("type") != "tool_search_call":
                    continue
                text = part.raw.get("arguments")
                if not isinstance(text, str):
                    continue
                try:
                    arguments = json.loads(text)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(arguments, dict):
                    continue
                entry.parts[n] = Part(part.kind, {**part.raw, "arguments": arguments}, part.call_id, part.name)
                entry.dirty = True
                ctx.report(self, "decoded", entry, None, "gave a tool search call its arguments back as an object")
