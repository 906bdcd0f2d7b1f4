from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Entry, Part, Transcript
from ._base import Context, Rule

# Fields that say nothing once the content is gone: a message with only these holds nothing.
_BARE = frozenset({"role", "content", "name", "tool_calls"})


class NullContent(Rule):
    """
    What it repairs:
        ``content: null`` where only a string will do: a tool message whose tool returned
        nothing (None), an assistant message that calls no tool (an SDK that stores an empty
        answer as null), a user or system message. Bound for Mistral, an assistant message
        with no ``content`` at all too (Mistral reads it as null), and one whose only call is
        a legacy ``function_call``: Mistral has no functions API, so the call does not stand
        in for content there. Bound for Ollama, a message of any role without ``content`` and
        without ``tool_calls`` (a turn an agent stored with its calls gone, a legacy call).

    Why:
        OpenAI: "Invalid value for 'content': expected a string, got null."
        Mistral: "Assistant message must have either content or tool_calls, but not none."
        llama.cpp: "Assistant message must contain either 'content' or 'tool_calls'!"
        Groq: "'messages.3' : for 'role:tool' the following must be satisfied
        [('messages.3.content' : value must be a string)]"
        Ollama: "invalid message content type: <nil>" (QwenLM/qwen-code#3350)

    Example:
        Before: user "hi" / assistant {"content": null} / user "are you there?"
        After:  user "hi" / user "are you there?"
        Before: assistant calls search (call_1) / tool result for call_1 {"content": null}
        After:  assistant calls search (call_1) / tool result for call_1 {"content": ""}
        Before (bound for Mistral): user "weather?" /
                assistant {"function_call": {"name": "get_weather", "arguments": "{}"}}
        After:  user "weather?" /
                assistant {"content": "", "function_call": {"name": "get_weather", ...}}

    Safety:
        Nothing is lost: null content holds no text. A tool message keeps answering its call,
        with an empty string (every OpenAI-compatible provider takes an empty tool result). Any
        other message that holds nothing else is removed rather than given an empty string,
        which several compatible providers refuse (Anthropic's and Gemini's endpoints, xAI,
        Bedrock-backed gateways); one that still carries something (a refusal, audio,
        reasoning_content, a legacy function_call bound for Mistral) is kept with an empty
        string. An assistant message with tool calls, or with a legacy function_call where the
        provider has the functions API, may have null content and is left alone. Bound for
        llama.cpp's server, an assistant message with no ``content`` at all is read as null too
        (a reasoning-only turn is kept, with an empty string); bound for Ollama, a message of
        any role with no ``content``, and a legacy function_call does not stand in for it.
    """

    code = "OA002"
    name = "null-content"
    apis = frozenset({"openai-chat"})
    fixes: ClassVar[tuple[str, ...]] = (
        "openai.O6",
        "mistral.M5",
        "llamacpp.empty-assistant",
        "ollama.content-type-nil",
    )

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        # Mistral reads a missing content as null, and has no functions API (M5); llama-server asks
        # an assistant message for a content or tool_calls key, a function_call not standing in;
        # Ollama reads any message's missing content as nil, and asks for tool_calls beside it.
        missing_is_null = ctx.provider in ("mistral", "llamacpp", "ollama")
        any_role = ctx.provider == "ollama"
        kept = []
        for entry in transcript.entries:
            source = entry.source
            if entry.origin is None or not _null_content(entry, missing_is_null, any_role):
                kept.append(entry)
                continue
            legacy_call = source.get("function_call") is not None and not missing_is_null
            if entry.role == "assistant" and (entry.calls() or legacy_call):
                kept.append(entry)
                continue
            if entry.role not in ("tool", "function") and set(source) <= _BARE:
                ctx.report(
                    self,
                    "removed",
                    entry,
                    None,
                    f"removed {_a(entry.role)} message whose content was {_null(source)} and that held nothing else",
                )
                continue
            filled = {**source, "content": ""}
            entry.source = filled
            call_id = None
            if entry.role == "tool":
                result = entry.parts[0]
                call_id = result.call_id
                entry.parts[0] = Part(RESULT, filled, call_id, result.name)
            ctx.report(
                self,
                "filled",
                entry,
                call_id,
                f"replaced the {_null(source)} content of {_a(entry.role)} message with an empty string",
            )
            kept.append(entry)
        transcript.entries = kept


def _null_content(entry: Entry, missing_is_null: bool, any_role: bool) -> bool:
    if "content" in entry.source:
        return entry.source["content"] is None
    return missing_is_null and (any_role or entry.role == "assistant")


def _null(source: dict[str, Any]) -> str:
    return "null" if "content" in source else "missing"


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in ("a", "e", "i", "o", "u") else f"a {role}"
