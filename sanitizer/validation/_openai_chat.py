"""OpenAI Chat Completions rules (section 2) and the OpenAI-compatible providers (sections 6-8).

Check order (OpenAI reports only the first): schema checks in body order (O5 empty
``messages``; per message O5 ``tool_calls: []``, O5 empty function name, O6 null content and
content parts without ``type``; a missing ``content`` is not checked, its error text is not in the
catalogue), then pairing in body order: for each assistant message with
``tool_calls``, O1 for it, then O4 / O3 for the ``tool`` messages that follow it; O2 for a
``tool`` message that follows anything else.

Providers differ only where the catalogue says so:

- ``azure``: O2 spells "preceding".
- ``openrouter``: OpenAI's violation, wrapped as OpenRouter wraps upstream errors (W1).
- ``deepseek``: D1 / D2 replace O1 / O2 (DeepSeek counts tool messages, so O3 / O4 become D1);
  D3 (``reasoning_content`` on tool-calling turns, when ``thinking`` is enabled or the model is
  ``deepseek-reasoner``), D4 and D5 (``deepseek-reasoner``). D5 is raised for a final assistant
  message without ``prefix: true`` only: reasoner tool loops legitimately end on a tool message.
- ``mistral``: M1, then M3 / M2 in body order, then M4 replace the OpenAI rules entirely.
- ``groq``: X5 (string content for ``system`` and ``tool`` messages) plus OpenAI's pairing rules.
- ``moonshot``: X4 (thinking models: ``reasoning_content`` on tool-call turns) plus OpenAI's
  pairing rules.
- ``minimax``: X3 for every pairing fault (missing, orphan, unknown or duplicate result).
- ``vllm``: no pairing checks (V1); the role-alternation error of the model's chat template for
  models whose template is known from their name (Mistral/Mixtral; Gemma, Llama-2).
- ``anthropic-openai-compat`` / ``gemini-openai-compat``: the body is converted the way the
  endpoint converts it and checked with Anthropic's / Gemini's rules.

Where a compatible provider's own text for a rule is not in the catalogue (groq, moonshot
pairing), OpenAI's text is used inside that provider's envelope. Not checked: O7 (nothing to
reject), O8 (Assistants API), X1 / X2 / X6 (Perplexity, DashScope, xAI are not providers here),
D6 (error text unknown), the Groq "property ... is unsupported" errors (full text unknown),
V2 (Ollama), W2 / W3 (relays).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._envelope import violation, wrap_openrouter
from ._shape import as_dict, as_list, as_str, body_dict, required_list
from ._violation import Violation

O1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O2 = "Invalid parameter: messages with role 'tool' must be a response to a {spelling} message with 'tool_calls'."
O3 = "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
O4 = "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] and messages[{n}]."
O5_MESSAGES = (
    "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
)
O5_TOOL_CALLS = (
    "Invalid 'messages[{n}].tool_calls': empty array. "
    "Expected an array with minimum length 1, but got an empty array instead."
)
O5_NAME = (
    "Invalid 'messages[{n}].tool_calls[{k}].function.name': empty string. "
    "Expected a string with minimum length 1, but got an empty string instead."
)
O6 = "Invalid value for 'content': expected a string, got null."
O6_PART = "Missing required parameter: 'messages[{n}].content[{k}].type'."
D1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
D2 = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
D3 = "The `reasoning_content` in the thinking mode must be passed back to the API."
D3_REASONER = (
    "Missing `reasoning_content` field in the assistant message at message index {n}. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
D4 = (
    "deepseek-reasoner does not support successive user or assistant messages (messages[{i}] and "
    "messages[{j}] in your input). You should interleave the user/assistant messages in the message sequence."
)
D5 = (
    "The last message of deepseek-reasoner must be a user message, or an assistant message with prefix "
    "mode on (refer to https://api-docs.deepseek.com/guides/chat_prefix_completion)."
)
M1 = "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."
M2 = "Not the same number of function calls and responses"
M3 = "Unexpected role '{role}' after role '{previous}'"
M4 = "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant"
X3 = "invalid params, tool call result does not follow tool call (2013)"
X4 = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {n}"
X5 = (
    "'messages.{n}' : for 'role:{role}' the following must be satisfied"
    "[('messages.{n}.content' : value must be a string)]"
)
V1_MISTRAL = "After the optional system message, conversation roles must alternate user/assistant/user/assistant/..."
V1_PLAIN = "Conversation roles must alternate user/assistant/user/assistant/..."

_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


@dataclass(frozen=True, slots=True)
class _Msg:
    role: str
    raw: dict[str, Any]
    calls: tuple[str, ...]  # tool_call ids of an assistant message, in order
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class _Fault:
    """A pairing fault in provider-neutral terms."""

    kind: str  # missing | orphan | unknown | duplicate
    index: int
    ids: tuple[str, ...] = ()
    first: int = 0
    owner: int = 0
    """The assistant message whose calls the fault concerns (not set for an orphan)."""


def parse(body: object) -> tuple[dict[str, Any], list[_Msg]]:
    """The body and its messages, shape-checked."""
    b = body_dict(body)
    raw_messages = required_list(b, "messages")
    messages: list[_Msg] = []
    for i, raw in enumerate(raw_messages):
        m = as_dict(raw, f"messages[{i}]")
        role = as_str(m.get("role"), f"messages[{i}].role")
        calls: list[str] = []
        tool_calls = m.get("tool_calls")
        if tool_calls is not None:
            for k, call in enumerate(as_list(tool_calls, f"messages[{i}].tool_calls")):
                c = as_dict(call, f"messages[{i}].tool_calls[{k}]")
                calls.append(as_str(c.get("id"), f"messages[{i}].tool_calls[{k}].id"))
                fn = as_dict(c.get("function"), f"messages[{i}].tool_calls[{k}].function")
                as_str(fn.get("name"), f"messages[{i}].tool_calls[{k}].function.name")
        tool_call_id = None
        if role == "tool":
            tool_call_id = as_str(m.get("tool_call_id"), f"messages[{i}].tool_call_id")
        content = m.get("content")
        if isinstance(content, list):
            for k, part in enumerate(content):
                as_dict(part, f"messages[{i}].content[{k}]")
        messages.append(_Msg(role, m, tuple(calls), tool_call_id))
    return b, messages


def faults(messages: list[_Msg]) -> list[_Fault]:
    """Pairing faults in the order OpenAI finds them: one linear pass."""
    found: list[_Fault] = []
    i = 0
    n = len(messages)
    while i < n:
        msg = messages[i]
        if msg.role == "tool":
            found.append(_Fault("orphan", i))
            i += 1
            continue
        if msg.role != "assistant" or not msg.calls:
            i += 1
            continue
        pending = dict.fromkeys(msg.calls)
        answered: dict[str, int] = {}
        later: list[_Fault] = []
        j = i + 1
        while j < n and messages[j].role == "tool":
            ident = messages[j].tool_call_id or ""
            if ident in answered:
                later.append(_Fault("duplicate", j, (ident,), answered[ident], owner=i))
            elif ident in pending:
                del pending[ident]
                answered[ident] = j
            else:
                later.append(_Fault("unknown", j, (ident,), owner=i))
            j += 1
        if pending:
            found.append(_Fault("missing", i, tuple(pending), owner=i))
        found.extend(later)
        i = j
    return found


def validate_openai_chat(body: object, provider: str) -> list[Violation]:
    """The rules ``provider`` applies to an OpenAI-shaped Chat Completions body."""
    if provider == "anthropic-openai-compat":
        from ._convert import validate_via_anthropic

        return validate_via_anthropic(body)
    if provider == "gemini-openai-compat":
        from ._convert import validate_via_gemini

        return validate_via_gemini(body)
    b, messages = parse(body)
    if provider == "mistral":
        return _mistral(messages)
    if provider == "vllm":
        return _vllm(b, messages)
    if provider == "openrouter":
        return [wrap_openrouter(v, "openai") for v in _openai(b, messages, "openai")]
    if provider == "deepseek":
        return _deepseek(b, messages)
    out = _openai(b, messages, provider)
    if provider == "groq":
        out = _groq(messages) + out
    if provider == "moonshot":
        out += _moonshot(b, messages)
    return out


def _schema(messages: list[_Msg], provider: str) -> list[Violation]:
    out: list[Violation] = []
    if not messages:
        return [violation(provider, "openai.O5", O5_MESSAGES, None, param="messages", code="empty_array")]
    for i, msg in enumerate(messages):
        tool_calls = msg.raw.get("tool_calls")
        if tool_calls == []:
            param = f"messages[{i}].tool_calls"
            out.append(violation(provider, "openai.O5", O5_TOOL_CALLS.format(n=i), i, param=param, code="empty_array"))
        for k, call in enumerate(tool_calls or ()):
            if call["function"]["name"] == "":
                param = f"messages[{i}].tool_calls[{k}].function.name"
                text = O5_NAME.format(n=i, k=k)
                out.append(violation(provider, "openai.O5", text, i, param=param, code="empty_string"))
        content = msg.raw.get("content", "")
        if content is None and not (msg.role == "assistant" and (msg.calls or msg.raw.get("function_call"))):
            out.append(violation(provider, "openai.O6", O6, i, param=f"messages.[{i}].content", code=None))
        if isinstance(content, list):
            for k, part in enumerate(content):
                if "type" not in part:
                    param = f"messages[{i}].content[{k}].type"
                    text = O6_PART.format(n=i, k=k)
                    out.append(
                        violation(provider, "openai.O6", text, i, param=param, code="missing_required_parameter")
                    )
    return out


def _openai(b: dict[str, Any], messages: list[_Msg], provider: str) -> list[Violation]:
    out = _schema(messages, provider)
    if provider == "minimax":
        out.extend(violation(provider, "minimax.X3", X3, f.index) for f in faults(messages))
        return out
    spelling = "preceding" if provider == "azure" else "preceeding"
    for f in faults(messages):
        role_param = f"messages.[{f.index}].role"
        if f.kind == "missing":
            text = O1.format(ids=", ".join(f.ids))
            out.append(violation(provider, "openai.O1", text, f.index, param=role_param, code=None))
        elif f.kind == "orphan":
            text = O2.format(spelling=spelling)
            out.append(violation(provider, "openai.O2", text, f.index, param=role_param, code=None))
        elif f.kind == "unknown":
            param = f"messages.[{f.index}].tool_call_id"
            out.append(violation(provider, "openai.O3", O3.format(id=f.ids[0]), f.index, param=param, code=None))
        else:
            param = f"messages.[{f.index}].tool_call_id"
            text = O4.format(id=f.ids[0], first=f.first, n=f.index)
            out.append(violation(provider, "openai.O4", text, f.index, param=param, code=None))
    return out


def _deepseek(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    p = "deepseek"
    out: list[Violation] = []
    missing_reported: set[int] = set()
    for f in faults(messages):
        if f.kind == "orphan":
            out.append(violation(p, "deepseek.D2", D2, f.index))
            continue
        # DeepSeek counts the tool messages after the call: an unknown or repeated id leaves one unanswered.
        if f.owner not in missing_reported:
            missing_reported.add(f.owner)
            out.append(violation(p, "deepseek.D1", D1, f.owner))
    out.sort(key=lambda v: v.message_index if v.message_index is not None else -1)
    model = b.get("model")
    reasoner = model == "deepseek-reasoner"
    thinking = b.get("thinking")
    if reasoner or (isinstance(thinking, dict) and thinking.get("type") == "enabled"):
        for i, msg in enumerate(messages):
            if msg.role == "assistant" and msg.calls and "reasoning_content" not in msg.raw:
                text = D3_REASONER.format(n=i) if reasoner else D3
                out.append(violation(p, "deepseek.D3", text, i))
    if reasoner:
        for i in range(1, len(messages)):
            role = messages[i].role
            if role in ("user", "assistant") and messages[i - 1].role == role:
                out.append(violation(p, "deepseek.D4", D4.format(i=i - 1, j=i), i - 1))
        if messages and messages[-1].role == "assistant" and messages[-1].raw.get("prefix") is not True:
            out.append(violation(p, "deepseek.D5", D5, len(messages) - 1))
    return out


def _mistral(messages: list[_Msg]) -> list[Violation]:
    p = "mistral"
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        ids = list(msg.calls)
        if msg.tool_call_id is not None:
            ids.append(msg.tool_call_id)
        for ident in ids:
            if not _MISTRAL_ID.fullmatch(ident):
                text = M1.format(id=ident)
                out.append(violation(p, "mistral.M1", text, i, type_="invalid_function_call", code="3280"))
    n = len(messages)
    i = 0
    while i < n:
        msg = messages[i]
        previous = messages[i - 1].role if i else None
        if previous in ("tool", "user") and msg.role in ("tool", "user") and previous != msg.role:
            text = M3.format(role=msg.role, previous=previous)
            out.append(violation(p, "mistral.M3", text, i, type_="invalid_request_message_order", code="3230"))
            i += 1
            while msg.role == "tool" and i < n and messages[i].role == "tool":
                i += 1
            continue
        if msg.role == "tool" or (msg.role == "assistant" and msg.calls):
            # A run of tool messages answers the calls of the assistant message just before it.
            calls = len(msg.calls)
            j = i + 1 if msg.role == "assistant" else i
            start = j
            while j < n and messages[j].role == "tool":
                j += 1
            if j - start != calls:
                out.append(violation(p, "mistral.M2", M2, i))
            i = max(j, i + 1)
            continue
        i += 1
    if messages and messages[-1].role == "assistant" and messages[-1].raw.get("prefix") is not True:
        out.append(violation(p, "mistral.M4", M4, n - 1))
    return out


def _groq(messages: list[_Msg]) -> list[Violation]:
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        if msg.role in ("system", "tool") and not isinstance(msg.raw.get("content"), str):
            out.append(violation("groq", "groq.X5", X5.format(n=i, role=msg.role), i))
    return out


def _moonshot(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    thinking = b.get("thinking")
    model = b.get("model")
    enabled = (isinstance(thinking, dict) and thinking.get("type") == "enabled") or (
        isinstance(model, str) and "thinking" in model
    )
    if not enabled:
        return []
    return [
        violation("moonshot", "moonshot.X4", X4.format(n=i), i)
        for i, msg in enumerate(messages)
        if msg.role == "assistant" and msg.calls and "reasoning_content" not in msg.raw
    ]


def _vllm(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    model = b.get("model")
    if not isinstance(model, str):
        return []
    name = model.lower()
    checked = messages
    if "mistral" in name or "mixtral" in name:
        text = V1_MISTRAL
        # Mistral's tool-aware templates leave tool messages and tool-calling turns out of the check.
        checked = [m for m in messages if m.role != "tool" and not m.calls]
    elif "gemma" in name or "llama-2" in name:
        text = V1_PLAIN
    else:
        return []
    # The template raises at the first turn out of place; every such turn is listed.
    position = {id(m): i for i, m in enumerate(messages)}
    out: list[Violation] = []
    k = 0
    for msg in checked:
        if msg.role == "system" and k == 0:
            continue
        expected = "user" if k % 2 == 0 else "assistant"
        if msg.role != expected:
            out.append(violation("vllm", "vllm.V1", text, position[id(msg)]))
        k += 1
    return out
