from __future__ import annotations

from typing import ClassVar

from .._ir import RESULT, Entry, Part, Transcript
from ._base import Context, Rule
from .tp004_orphan_tool_result import folded_text


class FunctionMessageWithoutName(Rule):
    """
    What it repairs:
        A legacy ``function`` message (the functions API's result) without the function's
        ``name``: an agent that sends its steps' observations as role and text only
        (langchaingo's OpenAI functions agent, which also replayed no call before them).

    Why:
        OpenAI: "Missing parameter 'name': messages with role 'function' must have a 'name'."
        (tmc/langchaingo PR#924)

    Example:
        Before: user "how do I enrol?" / assistant {"function_call": {"name": "search_info",
                ...}} / function "enrolment opens in May"
        After:  the same, the function message named ``search_info``
        Before: user "how do I enrol?" / function "enrolment opens in May"
        After (policy orphan_tool_result fold): user "how do I enrol?" /
                user "Result of a tool call returned earlier: enrolment opens in May"
        After (policy drop): user "how do I enrol?"

    Safety:
        A function message right after an assistant message's legacy ``function_call``
        answers that call, and takes its name. Otherwise the name is nowhere in the request,
        and no repair can make it up: the message is treated as a result whose call is gone,
        as orphan-tool-result treats one (policy ``orphan_tool_result``). fold (default) keeps
        what the function returned as labelled text in a user message where it stood; drop
        removes it and keeps its full content in the repair record's detail only.
    """

    code = "OA005"
    name = "function-message-without-name"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = ("openai.O12",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        fold = ctx.policy.orphan_tool_result == "fold"
        kept: list[Entry] = []
        for entry in transcript.entries:
            if entry.role != "function" or entry.source.get("name") is not None:
                kept.append(entry)
                continue
            called = _function_called(kept[-1]) if kept else None
            if called is not None:
                entry.source = {**entry.source, "name": called}
                ctx.report(
                    self, "named", entry, None, f"gave a function message the name of the call before it, {called!r}"
                )
                kept.append(entry)
                continue
            content, text = folded_text(Part(RESULT, entry.source), ctx)
            if fold:
                folded = ctx.dialect.text_entry("user", text)
                folded.origin = entry.origin
                kept.append(folded)
                detail = "turned a function message without a name, which no call before it gives, into user text"
                ctx.report(self, "folded", entry, None, f"{detail}; its content was: {content}")
            else:
                detail = "dropped a function message without a name, which no call before it gives"
                ctx.report(self, "dropped", entry, None, f"{detail}; its content was: {content}")
        transcript.entries = kept


def _function_called(entry: Entry) -> str | None:
    """The name in ``entry``'s legacy function_call, if it is an assistant message with one."""
    function_call = entry.source.get("function_call") if entry.role == "assistant" else None
    name = function_call.get("name") if isinstance(function_call, dict) else None
    return name if isinstance(name, str) and name else None
