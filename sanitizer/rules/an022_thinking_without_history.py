from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from .._ir import RESULT, THINKING, Transcript
from ..providers import binding
from ..validation._bedrock import might_be_claude
from ._base import Context, Rule
from ._thinking import thinking_manual

# Where each format keeps the request's thinking settings: Bedrock Converse passes Claude's own
# in additionalModelRequestFields (AWS's examples: additionalModelRequestFields={"thinking": ...}).
_CONVERSE_FIELDS = "additionalModelRequestFields"
# Roles that are no turn: Anthropic takes system messages out of the turns (and a gateway takes a
# Chat body's out of the messages) before it looks for the last tool round.
_NO_TURN = frozenset({"system", "developer"})
# The context edit that "requires `thinking` to be enabled" (anthropics/claude-code#11971), "or
# adaptive" (router-for-me/CLIProxyAPI#4957): it goes where thinking goes.
_CLEAR_THINKING = "clear_thinking_20251015"
_DISABLED = {"type": "disabled"}
# The top-level fields of an Anthropic or Chat body that turn thinking on or need it.
_SETTINGS = ("thinking", "reasoning_effort", "context_management")


class ThinkingWithoutHistory(Rule):
    """
    What it repairs:
        A request that turns Claude's manual thinking on (``thinking`` enabled; in a Chat
        body a gateway such as LiteLLM sends to Claude, ``thinking`` or ``reasoning_effort``; in
        a Bedrock Converse body, ``additionalModelRequestFields.thinking``) while it continues a
        tool loop whose assistant turn holds no thinking block: history written with thinking
        off, by another model or provider, or by a framework that keeps no thinking blocks.
        Policy ``thinking_without_history``.

    Why:
        Anthropic: "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but
        found `tool_use`. When `thinking` is enabled, a final `assistant` message must start
        with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result`
        blocks). We recommend you include thinking blocks from previous turns. To avoid this
        requirement, disable `thinking`. ..." (Kilo-Org/kilocode#5219 on Vertex,
        anomalyco/opencode#8010 through Bedrock's ConverseStream, anomalyco/opencode#3077
        through LiteLLM).

    Example:
        Before: thinking {"type": "enabled", "budget_tokens": 1024} / user "weather?" /
                assistant [tool_use toolu_1] / user [tool_result toolu_1]
        After:  (no thinking) / user "weather?" / assistant [tool_use toolu_1] /
                user [tool_result toolu_1]

    Safety:
        A repair of the request, never of the transcript: no message is touched. Thinking that
        was lost cannot be made up (only the API signs it), so this one request goes without
        thinking, as the refusal itself advises: ``thinking`` (with its ``budget_tokens``) is
        removed, a Chat body's ``reasoning_effort`` too, or, for a model that thinks unasked
        (Claude Opus 5, Sonnet 5, Haiku 5.5), ``thinking`` becomes ``{"type": "disabled"}``; a
        ``clear_thinking_20251015`` context edit, which requires thinking, goes with it. The
        removed values are kept in the repair record. Earlier turns' thinking blocks stay: the
        API refuses them with thinking off only in a final assistant message, and the request
        ends with the tool results. The model answers without thinking, and so does every
        request of the same tool loop; the user's next message gets thinking back. A model that
        always thinks (Claude Opus 5.5, Sonnet 5.5, Fable, Mythos) cannot be told not to and is
        left alone, as is a Bedrock body for a model that is not Claude. ``leave`` forwards the
        request as it is.
    """

    code = "AN022"
    name = "thinking-without-history"
    apis = frozenset({"anthropic-messages", "bedrock-converse", "openai-chat"})
    # Claude's own endpoints; an Anthropic body bound for OpenAI or Mistral reaches them as Chat
    # (reasoning_effort), and DeepSeek's Anthropic endpoint answers its own D3.
    providers = frozenset({"anthropic", "bedrock", "vertex"})
    fixes: ClassVar[tuple[str, ...]] = ("anthropic.A13",)
    # Whether it acts turns on the policy and the model (one that thinks unasked, or always).
    looks_past_format = True

    def applies_to(self, api: str, provider: str | None = None) -> bool:
        # A body bound for no provider in particular is bound for its format's own.
        return super().applies_to(api, binding(api, provider).rules if provider is None else provider)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        settings = body.get(_CONVERSE_FIELDS) if ctx.api == "bedrock-converse" else body
        messages = body.get("messages")
        if not self._may_act(settings, ctx) or type(messages) is not list:
            return True
        return _last_round(_raw_turns(messages, ctx.api), ctx.api) is None

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        converse = ctx.api == "bedrock-converse"
        settings = transcript.field(_CONVERSE_FIELDS) if converse else transcript.fields()
        if not self._may_act(settings, ctx):
            return
        api = ctx.api
        turns = [(e.role, e.has(RESULT), _holds_thinking(e.parts, e.source, api), e.origin) for e in transcript.entries]
        found = _last_round(reversed(turns), ctx.api)
        if found is None:
            return
        assert isinstance(settings, dict)
        if converse:
            fields = dict(settings)
            said = _thinking_off(fields, ctx)
            if fields:
                transcript.body_updates[_CONVERSE_FIELDS] = fields
            else:
                transcript.body_updates.pop(_CONVERSE_FIELDS, None)
                transcript.body_removals.add(_CONVERSE_FIELDS)
        else:
            fields = {key: settings[key] for key in _SETTINGS if key in settings}
            said = _thinking_off(fields, ctx)
            for key in _SETTINGS:
                if key in fields and fields[key] is not settings.get(key):
                    transcript.body_updates[key] = fields[key]
                    transcript.body_removals.discard(key)
                elif key in settings and key not in fields:
                    transcript.body_updates.pop(key, None)
                    transcript.body_removals.add(key)
        where = "" if found.first is None else f" (message {found.first})"
        ctx.report(
            self,
            "disabled",
            None,
            None,
            f"disabled thinking for this request only, the transcript forwarded as it is: {said}. The assistant "
            f"turn of the last tool round{where} holds no thinking block, which the API requires while thinking "
            "is on, and lost thinking cannot be made up (policy thinking_without_history is disable)",
        )

    def _may_act(self, settings: Any, ctx: Context) -> bool:
        """Whether the request turns thinking on, and turning it off is this rule's to do."""
        if ctx.policy.thinking_without_history != "disable" or not isinstance(settings, dict):
            return False
        if not (thinking_manual(settings.get("thinking")) or (ctx.api == "openai-chat" and _effort(settings))):
            return False
        provider = ctx.provider or binding(ctx.api, None).rules
        if provider == "bedrock" and ctx.api != "anthropic-messages" and not might_be_claude(ctx.model):
            # Converse and LiteLLM serve other models too, which have no such rule (and LiteLLM
            # turns reasoning_effort into their own reasoning).
            return False
        return not ctx.capabilities.thinking_always_on


@dataclass(frozen=True, slots=True)
class _Round:
    first: int | None
    """The index in the input body of the round's first assistant message (None: one Suture made)."""


def _last_round(turns: Iterable[tuple[str, bool, bool, int | None]], api: str) -> _Round | None:
    """The last tool round when its assistant turn holds no thinking, from ``turns`` (role, holds a
    result, holds thinking, index) read back from the last message; None when the request does not
    end in such a round. As the API reads it: the closing user turn holds a result, and the
    assistant messages before it are one turn."""
    closing = ("tool", "user") if api == "openai-chat" else ("user",)
    results = False
    in_turn = False
    first: int | None = None
    for role, result, thinking, index in turns:
        if role in _NO_TURN:
            continue
        if not in_turn:
            if role in closing:
                results = results or result
                continue
            if not results or role != "assistant":
                return None
            in_turn = True
        if role != "assistant":
            break
        if thinking:
            return None
        first = index
    return _Round(first) if in_turn else None


def _raw_turns(messages: list[Any], api: str) -> Iterator[tuple[str, bool, bool, int | None]]:
    """What :func:`_last_round` reads, from the body's own messages, last first."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if type(message) is not dict:
            return
        role = message.get("role")
        content = message.get("content")
        blocks = content if type(content) is list else []
        if api == "openai-chat":
            result = role == "tool"
        elif api == "bedrock-converse":
            result = any(type(b) is dict and "toolResult" in b for b in blocks)
        else:
            result = any(type(b) is dict and b.get("type") == "tool_result" for b in blocks)
        yield str(role), result, _raw_thinking(blocks, message, api), index


def _raw_thinking(blocks: list[Any], message: dict[str, Any], api: str) -> bool:
    if api == "bedrock-converse":
        return any(type(b) is dict and "reasoningContent" in b for b in blocks)
    if api == "openai-chat" and _carries_thinking(message):
        return True
    return any(type(b) is dict and b.get("type") in ("thinking", "redacted_thinking") for b in blocks)


def _holds_thinking(parts: list[Any], source: dict[str, Any], api: str) -> bool:
    if any(p.kind == THINKING for p in parts):
        return True
    if api != "openai-chat":
        return False
    # A Chat message carries Claude's signed blocks beside its content, as LiteLLM returns them
    # (``thinking_blocks``) or OpenRouter (``reasoning_details``), or, replayed by some clients,
    # among its content parts.
    return _carries_thinking(source) or any(
        type(p.raw) is dict and p.raw.get("type") in ("thinking", "redacted_thinking") for p in parts
    )


def _carries_thinking(message: dict[str, Any]) -> bool:
    return any(type(message.get(key)) is list and message[key] for key in ("thinking_blocks", "reasoning_details"))


def _effort(settings: dict[str, Any]) -> bool:
    """A Chat body's ``reasoning_effort`` that LiteLLM turns into Claude's thinking ("none" turns it off)."""
    effort = settings.get("reasoning_effort")
    return isinstance(effort, str) and effort != "none"


def _thinking_off(settings: dict[str, Any], ctx: Context) -> str:
    """Turn thinking off in ``settings`` (the request's, or Converse's additional fields); says what changed."""
    said = []
    thinking = settings.pop("thinking", None)
    if ctx.api == "openai-chat" and _effort(settings):
        said.append(f"removed reasoning_effort {_compact(settings.pop('reasoning_effort'))}")
    if ctx.capabilities.thinking_on_by_default:
        # Left out, thinking stays on for this model: it is turned off in words.
        settings["thinking"] = dict(_DISABLED)
        why = f"{ctx.model} thinks unless told not to"
        if thinking is None:
            said.append(f"added thinking {_compact(_DISABLED)} ({why})")
        else:
            said.append(f"replaced thinking {_compact(thinking)} with {_compact(_DISABLED)} ({why})")
    elif thinking is not None:
        said.append(f"removed thinking {_compact(thinking)}")
    management = settings.get("context_management")
    if isinstance(management, dict) and isinstance(management.get("edits"), list):
        edits = management["edits"]
        doomed = [e for e in edits if isinstance(e, dict) and e.get("type") == _CLEAR_THINKING]
        if doomed:
            said.append(f"removed the context edit {_compact(doomed)}, which requires thinking")
            rest = {k: v for k, v in management.items() if k != "edits"}
            kept = [e for e in edits if not (isinstance(e, dict) and e.get("type") == _CLEAR_THINKING)]
            if kept:
                rest["edits"] = kept
            if rest:
                settings["context_management"] = rest
            else:
                del settings["context_management"]
    return "; ".join(said)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
