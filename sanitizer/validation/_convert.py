"""Bodies that reach a provider in another format: convert them as the converter does, then check.

Anthropic's and Gemini's OpenAI-compatible endpoints convert a Chat body; LiteLLM's Anthropic
adapter (Suture's own litellm route, and the gateways built on LiteLLM) converts an Anthropic
body to Chat for OpenAI and Mistral, and LiteLLM (as other gateways, Portkey's among them) a
Chat body to Converse for Bedrock.

The conversion keeps what the rules look at (roles, text, tool calls and results, ``tools``,
``model``) and remembers, for every converted message, the index of the OpenAI message it came
from, so ``Violation.message_index`` points into the body as sent while the message text prints
the converted index, as the endpoint does.

Anthropic: ``system``/``developer`` messages become the ``system`` parameter; a ``tool`` message
becomes a user message holding one ``tool_result`` (consecutive ones merge, A9); assistant
``content`` becomes a text block (dropped when empty next to ``tool_calls``) and each tool call
a ``tool_use`` whose ``input`` is the parsed ``arguments``.

Claude's thinking, asked for by a Chat body's ``thinking`` or its ``reasoning_effort`` (any but
"none": LiteLLM turns it into ``thinking``), is asked for by the converted body too, Anthropic's or
Converse's (in ``additionalModelRequestFields``), and an assistant message's ``thinking_blocks``
(LiteLLM's field for Claude's signed blocks) open its converted content, or its Converse turn as
``reasoningContent``: so A13 is checked on the way there (anomalyco/opencode#3077: a Chat body with
``thinking`` through LiteLLM, refused by Bedrock and Vertex alike).

Gemini: ``system``/``developer`` messages become ``systemInstruction``; ``assistant`` becomes a
``model`` content with text and ``functionCall`` parts; a run of ``tool`` messages becomes one
user content of ``functionResponse`` parts, each named by its message's ``name``, which the endpoint
refuses to do without (in body order with G5). Empty string content, a tool-calling assistant's too,
gets the endpoint's own "empty text parameter" error (G5, OpenAI-compatible wording); null
content next to tool calls passes (refused in 2025, langchain-ai/langchain#30803, and taken
since: odysseus-dev/odysseus#837). A tool call's thought signature
travels in its ``extra_content.google.thought_signature`` and lands on its ``functionCall`` part
(G4, for the body's Gemini 3 ``model``).

LiteLLM (``translate_anthropic_messages_to_openai``, litellm 1.110): the ``system`` parameter
becomes the first message; a user message's ``tool_result`` blocks become ``tool`` messages,
put before a user message holding its other blocks (mistralai/mistral-common#169: Mistral then
answers "Unexpected role 'user' after role 'tool'"); an empty user message is left out; an
assistant message's text blocks are joined into its ``content`` (a string content is kept as it
is, empty or not), its ``tool_use`` blocks become ``tool_calls``, its thinking becomes
``reasoning_content``, and one with none of these is left out.

LiteLLM's Responses bridge (``transform_responses_api_input_to_messages`` with reasoning replayed,
what ``litellm.responses`` sends a provider without the Responses API): ``instructions`` becomes
the first message, a system one; a message item keeps its role and its content, a string as it
is and parts as Chat parts (``input_text`` and ``output_text`` as text: an assistant's too, which
DeepSeek refuses); a call (``function_call``, ``custom_tool_call``) joins the assistant message
right before it, a text answer's or other calls', as one of its ``tool_calls``, and an assistant
message right after calls (before their outputs) joins their message's content; the summary text
of reasoning items (their ``content``'s, else their summary's) goes to the next assistant message as
``reasoning_content``, and where no assistant message follows, each keeps an assistant message
of its own with no content; each output
becomes a ``tool`` message, except one without a ``call_id``, which is left out.

Chat to Converse (LiteLLM's ``_bedrock_converse_messages_pt``): ``system``/``developer`` messages
become the ``system`` field; a run of user messages becomes one user turn, and so does a run of
``tool`` messages (each a ``toolResult``), merged into the user turn before it if there is one
(the gateway's own warning: "Potential consecutive user/tool blocks. Trying to merge."); a run of
assistant messages becomes one assistant turn, blank text left out, each tool call a
``toolUse``; a run's results, or a turn's calls, that repeat an id are left out after the first.
``tools`` become ``toolConfig``; without them, tool blocks get Bedrock's B4 (opencode#10259,
through Portkey; LiteLLM itself refuses such a body before sending it, unless told to add a
dummy tool).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ._anthropic import parse_messages, validate_anthropic
from ._bedrock import claude_thinking_on, validate_bedrock
from ._envelope import violation
from ._gemini import check_contents
from ._openai_chat import parse
from ._shape import as_dict, as_list, body_dict, required_list
from ._violation import Violation

G5_COMPAT = (
    "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try "
    "again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
# Gemini's OpenAI-compatible endpoint names a tool message's functionResponse by the message's own
# ``name``; without one it answers Google's generic 400 (NousResearch/hermes-agent#16478, 2026-04).
# Earlier reports quote the native check instead, "* GenerateContentRequest.contents[2].parts[0].
# function_response.name: Name cannot be empty." (inference-gateway/inference-gateway#181, 2025-09).
INVALID_ARGUMENT = "Request contains an invalid argument."
_SYSTEM = ("system", "developer")
# The providers an Anthropic body reaches as LiteLLM's adapter converts it to Chat.
CHAT_VIA_LITELLM = ("openai", "mistral")


def validate_via_anthropic(body: object) -> list[Violation]:
    b, messages = parse(body)
    thinking = chat_thinking(b)
    converted: list[dict[str, Any]] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        if msg.role in _SYSTEM:
            continue
        content = msg.raw.get("content")
        replayed = _replayed_thinking(msg.raw) if thinking is not None and msg.role == "assistant" else []
        if msg.role == "tool":
            # A tool message without an id gives a tool_result with an empty one (A12).
            result = {"type": "tool_result", "tool_use_id": msg.tool_call_id or "", "content": _text_of(content)}
            converted.append({"role": "user", "content": [result]})
        elif msg.role == "assistant" and msg.calls:
            blocks: list[dict[str, Any]] = list(replayed)
            text = _text_of(content)
            if text:
                blocks.append({"type": "text", "text": text})
            for call in msg.raw["tool_calls"]:
                fn = call["function"]
                blocks.append({"type": "tool_use", "id": call["id"], "name": fn["name"], "input": _args(fn)})
            converted.append({"role": "assistant", "content": blocks})
        else:
            role = "assistant" if msg.role == "assistant" else "user"
            kept = _anthropic_content(content)
            if replayed:
                rest = [{"type": "text", "text": kept}] if isinstance(kept, str) and kept else kept or []
                kept = [*replayed, *rest]
            converted.append({"role": role, "content": kept})
        index_map.append(i)
    tools = b.get("tools")
    anthropic_body: dict[str, Any] = {"messages": converted, "model": b.get("model")}
    if thinking is not None:
        anthropic_body["thinking"] = thinking
    if isinstance(tools, list):
        anthropic_body["tools"] = [
            {"name": t["function"].get("name") if isinstance(t.get("function"), dict) else None}
            for t in tools
            if isinstance(t, dict)
        ]
    return validate_anthropic(anthropic_body, "anthropic-openai-compat", index_map)


def validate_via_gemini(body: object, model: str | None = None) -> list[Violation]:
    p = "gemini-openai-compat"
    b, messages = parse(body)
    out: list[Violation] = []
    contents: list[dict[str, Any]] = []
    index_map: list[int] = []
    for i, msg in enumerate(messages):
        content = msg.raw.get("content")
        if content == "" and msg.role != "tool":
            # Next to tool calls too: the endpoint makes a text part of it all the same
            # (FoundationAgents/OpenManus#913; odysseus-dev/odysseus#837, 2026), where null passes.
            # A tool message's content is its function response, not a text part.
            out.append(violation(p, "gemini.G5", G5_COMPAT, i))
        if msg.role in _SYSTEM:
            continue
        if msg.role == "tool":
            name = msg.raw.get("name")
            if not isinstance(name, str) or not name:
                out.append(violation(p, "gemini.compat-result-without-name", INVALID_ARGUMENT, i))
            part: dict[str, Any] = {"functionResponse": {"name": name or "", "response": {}}}
            if contents and index_map and messages[index_map[-1]].role == "tool":
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
                index_map.append(i)
            continue
        parts: list[dict[str, Any]] = []
        if isinstance(content, list):
            for item in content:
                if item.get("type") == "text":
                    if item.get("text"):
                        parts.append({"text": item["text"]})
                else:
                    parts.append({"inlineData": {}})
        elif isinstance(content, str) and content:
            parts.append({"text": content})
        if msg.role == "assistant":
            parts.extend(_function_call(call) for call in msg.raw.get("tool_calls") or ())
        contents.append({"role": "model" if msg.role == "assistant" else "user", "parts": parts})
        index_map.append(i)
    model = model if model is not None else b.get("model")
    if out:
        # An empty text parameter, or a result with no name, is refused before the turn structure
        # is looked at.
        return out + [v for v in check_contents(contents, p, index_map, model) if v.rule != "gemini.G5"]
    return check_contents(contents, p, index_map, model)


def litellm_chat_view(body: object) -> tuple[list[dict[str, Any]], list[int | None]]:
    """The Chat messages LiteLLM's adapter makes of an Anthropic body (what the rules look at), and
    for each the index of the Anthropic message it came from (None: the ``system`` parameter)."""
    b = body_dict(body)
    parsed = parse_messages(required_list(b, "messages"))
    converted: list[dict[str, Any]] = []
    index_map: list[int | None] = []
    system = b.get("system")
    if system:
        converted.append({"role": "system", "content": _text_of(system)})
        index_map.append(None)
    for i, (role, content) in enumerate(parsed):
        for message in _litellm_messages(role, content):
            converted.append(message)
            index_map.append(i)
    return converted, index_map


def _litellm_messages(role: str, content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if role == "system":
        return [{"role": "system", "content": _text_of(content)}]
    if role == "user":
        if isinstance(content, str):
            return [{"role": "user", "content": content}] if content else []
        tools = [
            {"role": "tool", "tool_call_id": block["tool_use_id"], "content": _text_of(block.get("content"))}
            for block in content
            if block.get("type") == "tool_result"
        ]
        parts = [
            {"type": "text", "text": block["text"]} if block["type"] == "text" else {"type": "image_url"}
            for block in content
            if block.get("type") in ("text", "image", "document")
        ]
        return tools + ([{"role": "user", "content": parts}] if parts else [])
    if isinstance(content, str):
        return [{"role": "assistant", "content": content}]
    texts = [block["text"] for block in content if block.get("type") == "text"]
    calls = [
        {"id": block["id"], "type": "function", "function": {"name": block.get("name") or "", "arguments": "{}"}}
        for block in content
        if block.get("type") == "tool_use"
    ]
    thinking = [block for block in content if block.get("type") in ("thinking", "redacted_thinking")]
    if not (texts or calls or thinking):
        return []
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    reasoning = "".join(str(block.get("thinking") or "") for block in thinking)
    if reasoning:
        message["reasoning_content"] = reasoning
    return [message]


def litellm_responses_view(body: object) -> tuple[list[dict[str, Any]], list[int | None]]:
    """The Chat messages LiteLLM's Responses bridge makes of a Responses body, and for each the
    index of the input item it came from (None: ``instructions``)."""
    b = body_dict(body)
    converted: list[dict[str, Any]] = []
    index_map: list[int | None] = []
    instructions = b.get("instructions")
    if isinstance(instructions, str) and instructions:
        converted.append({"role": "system", "content": instructions})
        index_map.append(None)
    raw = b.get("input")
    if isinstance(raw, str):
        return [*converted, {"role": "user", "content": raw}], [*index_map, 0]
    # Reasoning items with text, waiting for the assistant message they go to.
    reasoning: list[tuple[int, str]] = []

    def standalone() -> None:
        # Not followed by an assistant message: each keeps a message of its own, no content.
        for at, text in reasoning:
            converted.append({"role": "assistant", "content": None, "reasoning_content": text})
            index_map.append(at)
        reasoning.clear()

    for n, item in enumerate(as_list(raw, "input")):
        d = as_dict(item, f"input[{n}]")
        kind = d.get("type", "message")
        if kind == "reasoning":
            text = reasoning_text(d)
            if text:
                reasoning.append((n, text))
            continue
        if kind in _BRIDGED_OUTPUTS or (kind == "message" and d.get("role") != "assistant"):
            standalone()
        previous = converted[-1] if converted and index_map[-1] is not None else None
        if kind in _BRIDGED_CALLS:
            # A call joins the assistant message before it, if that is one, as the bridge does.
            if previous is None or previous.get("role") != "assistant":
                previous = {"role": "assistant", "content": None}
                converted.append(previous)
                index_map.append(n)
            previous.setdefault("tool_calls", []).append(_bridged_call(d, kind))
        elif kind in _BRIDGED_OUTPUTS:
            if not d.get("call_id"):
                continue  # left out by the bridge: an output with an empty id answers nothing it can name
            output = d.get("output")
            text = output if isinstance(output, str) else _text_of(_chat_parts(output))
            converted.append({"role": "tool", "tool_call_id": d.get("call_id"), "content": text})
            index_map.append(n)
            continue
        elif kind == "message":
            content = d.get("content")
            content = content if isinstance(content, str) else _chat_parts(content)
            role = d.get("role")
            if role == "assistant" and previous is not None and previous.get("tool_calls"):
                # Text after a call, before any output, is the calling message's content.
                previous["content"] = _joined(previous["content"], content)
            else:
                previous = {"role": role, "content": content}
                converted.append(previous)
                index_map.append(n)
            if role != "assistant":
                continue
        else:
            continue
        if reasoning:
            texts = [text for _, text in reasoning]
            previous["reasoning_content"] = "\n".join([*texts, previous.get("reasoning_content") or ""]).strip()
            reasoning.clear()
    standalone()
    return converted, index_map


def reasoning_text(item: dict[str, Any]) -> str | None:
    """The text LiteLLM's bridge replays of a reasoning item: its ``content``'s, else its
    summary's, each part trimmed; None when it holds only opaque forms (encrypted content)."""
    for field in ("content", "summary"):
        value = item.get(field)
        if field == "content" and isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list):
            texts = [
                block["text"].strip()
                for block in value
                if isinstance(block, dict)
                and block.get("type") not in ("encrypted_content", "redacted_thinking")
                and isinstance(block.get("text"), str)
                and block["text"].strip()
            ]
            if texts:
                return "\n".join(texts)
    return None


_BRIDGED_CALLS = ("function_call", "custom_tool_call")
_BRIDGED_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _bridged_call(item: dict[str, Any], kind: str) -> dict[str, Any]:
    if kind == "custom_tool_call":
        arguments = json.dumps({"content": item.get("input")})
    else:
        given = item.get("arguments")
        arguments = given if isinstance(given, str) else "{}"
    return {
        "id": item.get("call_id"),
        "type": "function",
        "function": {"name": item.get("name") or "", "arguments": arguments},
    }


def _joined(content: Any, more: Any) -> Any:
    if content is None:
        return more
    as_parts = [{"type": "text", "text": c} if isinstance(c, str) else c for c in (content, more)]
    return [p for c in as_parts for p in (c if isinstance(c, list) else [c])]


def _chat_parts(content: Any) -> list[dict[str, Any]]:
    """A Responses content array as Chat parts: its texts as text parts, an image as an image part."""
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": part.get("text")})
        elif kind == "input_image":
            parts.append({"type": "image_url"})
    return parts


def validate_via_converse(body: object, model: str | None = None) -> list[Violation]:
    """A Chat body as a gateway sends it to Bedrock's Converse API, checked by Bedrock's rules; each
    violation's ``message_index`` points at the first Chat message of the turn it is about."""
    b, messages = parse(body)
    turns, index_map = _converse_turns(messages)
    converse: dict[str, Any] = {"messages": turns}
    if b.get("tools"):
        converse["toolConfig"] = {"tools": b["tools"]}
    named = b.get("model")
    model = model if model is not None else named if isinstance(named, str) else None
    thinking = chat_thinking(b)
    if thinking is not None:
        # LiteLLM sends Claude's thinking in additionalModelRequestFields, and a message's
        # thinking_blocks as the reasoningContent its turn starts with.
        converse["additionalModelRequestFields"] = {"thinking": thinking}
        ends = [*index_map[1:], len(messages)]
        for turn, start, end in zip(turns, index_map, ends, strict=True):
            if turn["role"] == "assistant":
                replayed = [block for m in messages[start:end] for block in _replayed_thinking(m.raw)]
                turn["content"][:0] = [{"reasoningContent": {"reasoningText": block}} for block in replayed]
    found = validate_bedrock(converse, "bedrock", model)
    return [v if v.message_index is None else replace(v, message_index=index_map[v.message_index]) for v in found]


def chat_thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    """The thinking a gateway (LiteLLM) asks Claude for on a Chat body's behalf: its ``thinking``
    when that turns thinking on, else an ``enabled`` one for its ``reasoning_effort`` (all but
    "none", which turns it off); None when it asks for none."""
    thinking = body.get("thinking")
    if claude_thinking_on(thinking):
        assert isinstance(thinking, dict)
        return thinking
    effort = body.get("reasoning_effort")
    return {"type": "enabled"} if isinstance(effort, str) and effort != "none" else None


def _replayed_thinking(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The signed blocks a Chat assistant message carries for Claude: LiteLLM's ``thinking_blocks``,
    or OpenRouter's ``reasoning_details``, from which it rebuilds them."""
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list):
        return [b for b in blocks if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")]
    details = message.get("reasoning_details")
    if not isinstance(details, list):
        return []
    return [
        {"type": "redacted_thinking", "data": d.get("data")}
        if d.get("type") == "reasoning.encrypted"
        else {"type": "thinking", "thinking": d.get("text"), "signature": d.get("signature")}
        for d in details
        if isinstance(d, dict)
    ]


def converse_view(body: object) -> tuple[list[dict[str, Any]], list[int]]:
    """The Converse turns a gateway makes of a Chat body (what the rules look at), and for each the
    index of the first Chat message in it."""
    return _converse_turns(parse(body)[1])


def _converse_turns(messages: list[Any]) -> tuple[list[dict[str, Any]], list[int]]:
    turns: list[dict[str, Any]] = []
    index_map: list[int] = []
    i, n = 0, len(messages)
    while i < n:
        start = i
        while i < n and messages[i].role in _SYSTEM:
            i += 1
        for role, kind in (("user", "user"), ("user", "tool"), ("assistant", "assistant")):
            first, blocks = i, []
            while i < n and messages[i].role == kind:
                blocks += _converse_blocks(messages[i])
                i += 1
            if not blocks:
                continue
            if kind != "user":
                blocks = _first_of_each_id(blocks)
            if role == "user" and turns and turns[-1]["role"] == "user":
                turns[-1]["content"] += blocks
            else:
                turns.append({"role": role, "content": blocks})
                index_map.append(first)
        if i == start:
            i += 1  # a role Converse has no place for (a legacy 'function' message)
    return turns, index_map


def _first_of_each_id(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The gateway keeps the first of a run's results (or a turn's calls) that share an id.
    seen: set[str] = set()
    kept = []
    for block in blocks:
        inner = block.get("toolResult") or block.get("toolUse")
        if inner is not None and inner["toolUseId"]:
            if inner["toolUseId"] in seen:
                continue
            seen.add(inner["toolUseId"])
        kept.append(block)
    return kept


def _converse_blocks(msg: Any) -> list[dict[str, Any]]:
    content = msg.raw.get("content")
    if msg.role == "tool":
        return [{"toolResult": {"toolUseId": msg.tool_call_id or "", "content": [{"text": _text_of(content)}]}}]
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str) and content and (msg.role == "user" or content.strip()):
        blocks.append({"text": content})
    elif isinstance(content, list):
        for part in content:
            if part.get("type") == "text":
                text = str(part.get("text", ""))
                if msg.role == "user" or text.strip():
                    blocks.append({"text": text})
            else:
                blocks.append({"image": {}})
    if msg.role == "assistant":
        blocks += [
            {"toolUse": {"toolUseId": c["id"], "name": c["function"]["name"], "input": {}}}
            for c in msg.raw.get("tool_calls") or ()
        ]
    return blocks


def _function_call(call: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": call["function"]["name"]}}
    extra = call.get("extra_content")
    google = extra.get("google") if isinstance(extra, dict) else None
    if isinstance(google, dict) and "thought_signature" in google:
        part["thoughtSignature"] = google["thought_signature"]
    return part


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _anthropic_content(content: object) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks: list[dict[str, Any]] = []
        for part in content:
            if part.get("type") == "text":
                blocks.append({"type": "text", "text": str(part.get("text", ""))})
            else:
                blocks.append({"type": "image"})
        return blocks
    return []


def _args(fn: dict[str, Any]) -> object:
    arguments = fn.get("arguments")
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
