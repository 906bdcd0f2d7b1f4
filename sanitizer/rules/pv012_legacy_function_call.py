from __future__ import annotations

from typing import Any

from .._ir import CALL, RESULT, Entry, Part, Transcript
from ._base import Context, Rule
from ._ids import FreshIds, all_ids, digest


class LegacyFunctionCall(Rule):
    """
    What it repairs:
        OpenAI's legacy functions API in a Chat body bound for a provider that only has tool
        calls: an assistant message's ``function_call``, the ``function`` message with its
        result, and the request's ``functions`` and ``function_call`` fields (agents built on
        the functions API: LangChain's OpenAI functions agent, AutoGen 0.2, langchaingo).

    Why:
        Those providers have no such call. Anthropic, Bedrock and Gemini see the message as
        empty ("messages.1: all messages must have non-empty content except for the optional
        final assistant message"), Mistral's and vLLM's templates as "Invalid assistant
        message: role='assistant' content=None tool_calls=None prefix=False", and where
        LiteLLM converts the call and its result for Anthropic, it gives each a random id of
        its own, so the call has no result ("`tool_use` ids were found without `tool_result`
        blocks immediately after").

    Example:
        Before: user "weather in Paris?" / assistant {"function_call": {"name": "get_weather",
                "arguments": "{\"city\":\"Paris\"}"}} / function get_weather "18C" /
                user "thanks"; ``functions`` [get_weather]
        After:  user "weather in Paris?" / assistant calls get_weather (call_fn_…) /
                tool result for call_fn_… "18C" / user "thanks"; ``tools`` [get_weather]

    Safety:
        The call keeps its name and arguments, and the result its content and name; each call
        gets an id made from its place and name (the same on every turn, so prompt caches stay
        valid) that no other call holds, and a function message takes the id of the nearest
        unanswered call of its name before it. One that answers no call becomes a tool message
        without an id, a result whose call is gone, which orphan-tool-result then settles
        (policy ``orphan_tool_result``: kept as user text by default). ``functions`` becomes
        ``tools`` and ``function_call`` becomes ``tool_choice``, unless the request already has
        them; then the legacy field goes.
    """

    code = "PV012"
    name = "legacy-function-call"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"anthropic", "bedrock", "gemini", "mistral", "vllm"})

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        return (
            "functions" not in body
            and "function_call" not in body
            and not any(m.get("role") == "function" or "function_call" in m for m in body["messages"])
        )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        taken = all_ids(transcript)
        fresh = FreshIds(taken)
        # Calls not yet answered, latest last: (name, id).
        unanswered: list[tuple[str, str]] = []
        for entry in transcript.entries:
            if entry.role == "assistant" and isinstance(entry.source.get("function_call"), dict):
                unanswered.append(self._convert_call(entry, taken, fresh, ctx))
            elif entry.role == "function":
                self._convert_result(entry, unanswered, ctx)
        self._convert_fields(transcript, ctx)

    def _convert_call(self, entry: Entry, taken: set[str], fresh: FreshIds, ctx: Context) -> tuple[str, str]:
        source = dict(entry.source)
        function = source.pop("function_call")
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        call_id = f"call_fn_{digest(f'{entry.origin}:{name}')}"
        if call_id in taken:
            call_id = fresh(call_id)
        taken.add(call_id)
        raw = {"id": call_id, "type": "function", "function": function}
        entry.source = source
        entry.parts.append(Part(CALL, raw, call_id, name or None))
        entry.dirty = True
        ctx.report(self, "converted", entry, call_id, f"turned the legacy function_call {name!r} into a tool call")
        return name, call_id

    def _convert_result(self, entry: Entry, unanswered: list[tuple[str, str]], ctx: Context) -> None:
        name = entry.source.get("name")
        answered = next((i for i in range(len(unanswered) - 1, -1, -1) if unanswered[i][0] == name), None)
        call_id = unanswered.pop(answered)[1] if answered is not None else None
        message = {k: v for k, v in entry.source.items() if k != "role"}
        tool_message = {"role": "tool", **({"tool_call_id": call_id} if call_id is not None else {}), **message}
        entry.role = "tool"
        entry.source = tool_message
        entry.parts = [Part(RESULT, tool_message, call_id)]
        entry.dirty = True
        answers = f"the result of {call_id}" if call_id is not None else "a result whose call is not in the request"
        ctx.report(
            self, "converted", entry, call_id, f"turned the function message {name!r} into a tool message, {answers}"
        )

    def _convert_fields(self, transcript: Transcript, ctx: Context) -> None:
        functions = transcript.field("functions")
        if functions is not None:
            if transcript.field("tools") is None and isinstance(functions, list):
                transcript.body_updates["tools"] = [{"type": "function", "function": f} for f in functions]
            transcript.body_removals.add("functions")
            ctx.report(self, "converted", None, None, "turned the request's functions into tools")
        choice = transcript.field("function_call")
        if choice is not None:
            if transcript.field("tool_choice") is None:
                transcript.body_updates["tool_choice"] = _tool_choice(choice)
            transcript.body_removals.add("function_call")
            ctx.report(self, "converted", None, None, "turned the request's function_call into tool_choice")


def _tool_choice(function_call: Any) -> Any:
    """``"auto"`` and ``"none"`` as they are; ``{"name": ...}`` as the tool choice naming that function."""
    if isinstance(function_call, dict):
        return {"type": "function", "function": {"name": function_call.get("name")}}
    return function_call
