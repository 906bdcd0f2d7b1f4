"""Bedrock Converse rules (catalogue section 5). Converse does not merge same-role messages.

Check order: B8 (first message not user, or no message at all), B7 (same role twice in a row, at the second), then per
message in body order B6 (empty content; empty error ``toolResult``) and B5 (blank text), then
B9 (``toolUseId`` pattern and length), B4 (tool blocks without ``toolConfig``), B3 (tool results
mixed with conversation blocks; for the models in TOOL_USE_ALONE_MODELS, tool uses too), then
pairing in body order: B1 (calls of an assistant turn not answered in the next user turn; the
index printed is the user turn's) and B2 (more results than calls in the previous turn); last,
Claude's own A13, which Bedrock passes on ("The model returned the following errors:
messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. ...",
anomalyco/opencode#8010 through ConverseStream, langchain-ai/langchain-aws#844): with Claude's
thinking on in ``additionalModelRequestFields.thinking`` (AWS's examples put it there), the
assistant message of the last tool round holds no ``reasoningContent``. It is checked for a model
that may be Claude (one that names none, or an inference profile that names no model): Bedrock's
DeepSeek takes the field and ignores it (calebevans/mulder#193).

B8's text is from the AWS error catalogue [infer]. B9's text is [infer]: the catalogue gives the
constraint, not the message, so the standard AWS validation wording is used
("1 validation error detected: Value '...' at '...' failed to satisfy constraint: ...") with
the field path Converse uses (``messages.N.member.content.M.member.toolUse.toolUseId``,
1-based ``member`` indexes as in AWS's query-style paths). The "tool use blocks" form of B3 is
model-dependent (Claude takes text next to its toolUse), so it is checked only for the models
the table below names, which Converse takes from the URL. Not checked: "A text block must be
included when using documents" (its trigger is not documented).
"""

from __future__ import annotations

import re
from fnmatch import translate
from typing import Any

from ._anthropic import A13
from ._envelope import violation
from ._shape import as_dict, as_list, as_str, body_dict, required_list
from ._violation import Violation

B1 = "Expected toolResult blocks at messages.{n}.content for the following Ids: {ids}"
B2 = "The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse blocks of previous turn."
B3 = "messages.{n}.content: Conversation blocks and tool result blocks cannot be provided in the same turn."
B3_TOOL_USE = "messages.{n}.content: Conversation blocks and tool use blocks cannot be provided in the same turn."
B4 = "The toolConfig field must be defined when using toolUse and toolResult content blocks."
B5 = (
    "The text field in the ContentBlock object at messages.{n}.content.{m} is blank. "
    "Add text to the text field, and try again."
)
B6 = (
    "The content field in the Message object at messages.{n} is empty. "
    "Add a ContentBlock object to the content field and try again."
)
B6_ERROR = "The content field at messages.{n}.content.{m}.toolResult cannot be empty when status value is error."
B7 = (
    "A conversation must alternate between user and assistant roles. "
    "Make sure the conversation alternates between user and assistant roles and try again."
)
B8 = "A conversation must start with a user message. Try again with a conversation that starts with a user message."
B9 = (
    "1 validation error detected: Value '{value}' at 'messages.{n}.member.content.{m}.member.{block}.toolUseId' "
    "failed to satisfy constraint: {constraint}"
)
_B9_PATTERN = "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
_B9_LENGTH_MAX = "Member must have length less than or equal to 64"
_B9_LENGTH_MIN = "Member must have length greater than or equal to 1"

_ID = re.compile(r"[a-zA-Z0-9_-]+")

# Models that refuse an assistant turn holding text (or any other block) next to its toolUse
# blocks: Meta's Llama models (quarkiverse/quarkus-langchain4j#1983, us.meta.llama3-2-11b-instruct;
# the same models refuse text next to toolResult, strands-agents/harness-sdk#1223,
# llama4-maverick-17b-instruct). Glob patterns matched against the lower-cased model id, whose
# leading * takes the cross-region prefixes ("us.", "eu.") and ARNs. When another model is seen
# refusing it, add its pattern here.
TOOL_USE_ALONE_MODELS: tuple[str, ...] = ("*meta.llama*",)
_TOOL_USE_ALONE = re.compile("|".join(translate(pattern) for pattern in TOOL_USE_ALONE_MODELS))


# How Claude names a Converse block's kind in its refusal.
_KINDS = {"toolUse": "tool_use", "toolResult": "tool_result", "text": "text", "image": "image", "document": "document"}


def claude_thinking_on(thinking: object) -> bool:
    """Whether Claude's ``thinking`` setting turns manual thinking on: under adaptive thinking the
    model may skip a turn's thinking, and a turn without it is its own."""
    return isinstance(thinking, dict) and thinking.get("type") == "enabled"


def might_be_claude(model: str | None) -> bool:
    """Whether a Bedrock model id may name Claude: it names no other model (none at all, or an
    application inference profile's ARN, which names no model)."""
    if model is None:
        return True
    name = model.lower()
    return "claude" in name or "application-inference-profile" in name


def captured_model(body: dict[str, Any]) -> str | None:
    """The model a Converse body names: none on the wire (the URL does), but boto3's
    ``converse(modelId=..., messages=...)`` keyword arguments, captured as a payload, carry it."""
    model = body.get("modelId")
    return model if isinstance(model, str) else None


def wants_tool_use_alone(model: str | None) -> bool:
    """Whether ``model`` is one the table above knows to refuse text next to a toolUse."""
    return model is not None and _TOOL_USE_ALONE.match(model.lower()) is not None


def validate_bedrock(body: object, provider: str = "bedrock", model: str | None = None) -> list[Violation]:
    """Bedrock's rules for a Converse body sent to ``model`` (the URL's model id)."""
    b = body_dict(body)
    messages = _parse(required_list(b, "messages"))
    model = model if model is not None else captured_model(b)
    out: list[Violation] = []

    def add(rule: str, text: str, index: int | None) -> None:
        out.append(violation(provider, f"bedrock.{rule}", text, index))

    if not messages or messages[0][0] != "user":
        add("B8", B8, 0 if messages else None)
    for i in range(1, len(messages)):
        if messages[i][0] == messages[i - 1][0]:
            add("B7", B7, i)
    for i, (_, blocks) in enumerate(messages):
        if not blocks:
            add("B6", B6.format(n=i), i)
        for m, block in enumerate(blocks):
            if "text" in block and not block["text"].strip():
                add("B5", B5.format(n=i, m=m), i)
            result = block.get("toolResult")
            if result is not None and result.get("status") == "error" and not result.get("content"):
                add("B6", B6_ERROR.format(n=i, m=m), i)
    for i, (_, blocks) in enumerate(messages):
        for m, block in enumerate(blocks):
            for key in ("toolUse", "toolResult"):
                if key in block:
                    ident = block[key]["toolUseId"]
                    constraint = _id_problem(ident)
                    if constraint:
                        text = B9.format(value=ident, n=i + 1, m=m + 1, block=key, constraint=constraint)
                        add("B9", text, i)
    tool_config = b.get("toolConfig")
    first_tool = next(
        (i for i, (_, blocks) in enumerate(messages) if any("toolUse" in x or "toolResult" in x for x in blocks)),
        None,
    )
    if first_tool is not None and not tool_config:
        add("B4", B4, first_tool)
    tool_use_alone = wants_tool_use_alone(model)
    for i, (role, blocks) in enumerate(messages):
        if any("toolResult" in x for x in blocks) and any("toolResult" not in x for x in blocks):
            add("B3", B3.format(n=i), i)
        elif (
            tool_use_alone
            and role == "assistant"
            and any("toolUse" in x for x in blocks)
            and any("toolUse" not in x for x in blocks)
        ):
            add("B3", B3_TOOL_USE.format(n=i), i)

    previous: list[str] = []
    for i, (role, blocks) in enumerate(messages):
        results = [x["toolResult"]["toolUseId"] for x in blocks if "toolResult" in x]
        if len(results) > len(previous):
            add("B2", B2.format(n=i), i)
        if previous:
            answered = set(results)
            missing = [ident for ident in previous if ident not in answered]
            if missing:
                add("B1", B1.format(n=i, ids=", ".join(missing)), i)
        calls = [x["toolUse"]["toolUseId"] for x in blocks if "toolUse" in x] if role == "assistant" else []
        previous = list(dict.fromkeys(calls))
    fields = b.get("additionalModelRequestFields")
    if isinstance(fields, dict) and claude_thinking_on(fields.get("thinking")) and might_be_claude(model):
        _unthought_round(messages, provider, out)
    return out


def _unthought_round(messages: list[tuple[str, list[dict[str, Any]]]], provider: str, out: list[Violation]) -> None:
    # Converse alternates roles (B7 otherwise): the round is the assistant message before the last.
    if len(messages) < 2 or messages[-2][0] != "assistant" or messages[-1][0] != "user":
        return
    if not any("toolResult" in x for x in messages[-1][1]):
        return
    n, blocks = len(messages) - 2, messages[-2][1]
    if any("reasoningContent" in x for x in blocks):
        return
    first = next(iter(blocks[0]), "text") if blocks else "text"
    out.append(violation(provider, "anthropic.A13", A13.format(n=n, found=_KINDS.get(first, first)), n))


def _id_problem(ident: str) -> str:
    if not ident:
        return _B9_LENGTH_MIN
    if len(ident) > 64:
        return _B9_LENGTH_MAX
    if not _ID.fullmatch(ident):
        return _B9_PATTERN
    return ""


def _parse(raw: list[Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    messages: list[tuple[str, list[dict[str, Any]]]] = []
    for i, item in enumerate(raw):
        m = as_dict(item, f"messages[{i}]")
        role = as_str(m.get("role"), f"messages[{i}].role")
        blocks = as_list(m.get("content"), f"messages[{i}].content")
        for k, block in enumerate(blocks):
            path = f"messages[{i}].content[{k}]"
            d = as_dict(block, path)
            if "text" in d:
                as_str(d["text"], f"{path}.text")
            for key in ("toolUse", "toolResult"):
                if key in d:
                    inner = as_dict(d[key], f"{path}.{key}")
                    as_str(inner.get("toolUseId"), f"{path}.{key}.toolUseId")
        messages.append((role, blocks))
    return messages
