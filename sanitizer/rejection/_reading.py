"""What a provider's refusal says: which violation it is, and where in the transcript.

A refusal is read three ways, in order: against the violation registry's own templates (a known
code, with the indexes and ids it prints); for a location in the transcript's own field
(``messages.3.content.1``, ``messages[5]``, ``contents[2].parts[0]``, ``input[4]``); and for any
tool-call or item id of the body quoted in it. A few texts name a defect but no place (a tool
call's arguments that are not JSON, documents with one name) or name a key the provider does not
accept by a path of their own (``_fields``): the strategy for that defect finds where. What is clearly
not about the transcript (the context window, the model, credentials, quotas, content policy, a
parameter outside the transcript) is never read as a location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..validation._registry import REGISTRY
from ._fields import fields_in, refused_fields

# Statuses providers answer a malformed transcript with; 404 only for a named Responses item
# ("Item with id 'rs_...' not found"), checked below.
REJECTION_STATUSES = frozenset({400, 404, 422})

# Refusals about something else than the transcript's shape: a repair cannot help, and retrying
# would only cost the user a second refusal. Lower-cased substrings.
_NOT_TRANSCRIPT = (
    "context length",
    "context window",
    "context_length",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "max_tokens",
    "maximum number of tokens",
    "model_not_found",
    "does not exist",
    "unknown model",
    "invalid model",
    "model not found",
    "api key",
    "api_key",
    "authentication",
    "unauthorized",
    "permission",
    "rate limit",
    "quota",
    "billing",
    "credit balance",
    "content policy",
    "content_policy",
    "safety",
    "flagged",
    "content management",
    "responsible ai",
)

# The body field that holds each format's transcript, and how each names a message and a block.
_TRANSCRIPT_KEY = {
    "openai-chat": "messages",
    "anthropic-messages": "messages",
    "bedrock-converse": "messages",
    "gemini": "contents",
    "openai-responses": "input",
}
_BLOCKS_KEY = {"gemini": "parts"}
_LOCATION = {
    key: re.compile(
        rf"\b{key}(?:\.|\[)(\d+)\]?(?:\.member)?"
        rf"(?:(?:\.|\[)?(?:content|parts|tool_calls)(?:\.member)?(?:\.|\[)(\d+)\]?)?"
    )
    for key in ("messages", "contents", "input")
}
_INDEX_WORDS = re.compile(r"\b(?:message|item) (?:at )?index (\d+)\b|\bat index (\d+)\b")
# A parameter path outside the transcript: `tools.0.name`, 'temperature', generationConfig...
_OTHER_FIELD = re.compile(
    r"(?:^|[\s'`\"(])(tools|tool_choice|temperature|top_p|top_k|max_tokens|max_output_tokens|response_format|"
    r"generationConfig|toolConfig|inferenceConfig|system|metadata|stop|text\.format|reasoning\.effort)"
    r"(?:[.\[\]'`\"):]|$)"
)
_MIN_ID = 4
# Words of a refusal about the request's shape, though it names no place in it: "Invalid request:
# messages", "Bad Request", "unexpected message format", "Unexpected item type in content".
_ABOUT_SHAPE = re.compile(
    r"\b(?:messages?|content|tool|tools?_calls?|role|function|arguments?|input|format|invalid|parse|schema|"
    r"json|validation|unexpected|bad request|malformed)\b",
    re.IGNORECASE,
)
# Python's own JSON parser on a tool call's arguments, quoted as it raised (vLLM re-parses the
# history's arguments for the chat template): the position pins down which arguments.
DECODER_ERROR = re.compile(
    r"(?:Expecting (?:value|property name enclosed in double quotes|'[,:]' delimiter)|Unterminated string "
    r"starting at|Invalid control character at|Invalid \\escape|Invalid \\uXXXX escape|Extra data): "
    r"line \d+ column \d+ \(char \d+\)"
)
INVALID_ARGUMENTS = re.compile(r"\b(?:invalid|not valid|must be valid) JSON\b[^\n]*\barguments\b", re.IGNORECASE)
# Bedrock Converse, on two document blocks anywhere in messages with one name (maximhq/bifrost#7003,
# ag-ui-protocol/ag-ui#2425): "Messages can't contain duplicate document names. Rename the document
# and retry your request."
DUPLICATE_DOCUMENT_NAMES = re.compile(r"\bduplicate document names\b", re.IGNORECASE)
# Refusals that name a defect of the transcript but no place in it: the strategy for that defect
# finds the parts that have it, and changes only those.
_UNPLACED = (DECODER_ERROR, INVALID_ARGUMENTS, DUPLICATE_DOCUMENT_NAMES)


@dataclass(frozen=True, slots=True)
class Reading:
    """What a refusal names. ``about_transcript`` False: leave the answer alone."""

    about_transcript: bool
    why: str
    codes: tuple[str, ...] = ()
    """Violation codes whose template the message matches."""
    message_index: int | None = None
    block_index: int | None = None
    block_is_call: bool = False
    """The block index counts an assistant message's tool calls (OpenAI's ``tool_calls[k]``)."""
    ids: tuple[str, ...] = field(default=())
    """Tool-call and item ids of the body that the message quotes."""
    message: str = ""
    """The refusal's own text, for a strategy that reads what the body cannot hold (a call of a
    stored response)."""
    vague: bool = False
    """A refusal of the transcript's shape that names nothing in it ("The provided messages input
    is invalid."): the portable profile's case, not a strategy's."""


def read(body: dict[str, Any], api: str, status: int, message: str) -> Reading:
    """What ``message`` (a provider's refusal with ``status`` of ``body``) names in the transcript."""
    if status not in REJECTION_STATUSES:
        return Reading(False, f"status {status} is not a transcript refusal")
    codes = tuple(_matching_codes(message))
    lowered = message.lower()
    if not codes:
        topic = next((t for t in _NOT_TRANSCRIPT if t in lowered), None)
        if topic is not None:
            return Reading(False, f"the refusal is about {topic!r}, not the transcript")
    key = _TRANSCRIPT_KEY[api]
    transcript = body.get(key)
    items: list[Any] = transcript if isinstance(transcript, list) else []
    message_index, block_index, block_is_call = _location(message, key)
    # A key the provider does not accept (remove-named-field's case), which the refusal may name by
    # a path _location does not read (a pydantic loc tuple) or by the key alone: about the
    # transcript when the transcript holds it where it says; else a parameter of the request's own
    # ('stream_options', 'max_completion_tokens').
    refused = [] if codes else list(fields_in(message, body, key))
    if not refused and message_index is None and not codes and refused_fields(message):
        return Reading(False, "the refusal names a parameter outside the transcript")
    if message_index is None and not codes and not refused and _OTHER_FIELD.search(message):
        return Reading(False, "the refusal names a parameter outside the transcript")
    if message_index is not None and message_index >= len(items):
        return Reading(False, f"the refusal names {key}[{message_index}], which the body does not have")
    ids = tuple(i for i in _ids_in(items) if len(i) >= _MIN_ID and _quoted(i, message))
    if status == 404 and not (codes or ids):
        return Reading(False, "a 404 that names no item of the body")
    if not (codes or ids or message_index is not None or refused or any(p.search(message) for p in _UNPLACED)):
        vague = status != 404 and _ABOUT_SHAPE.search(message) is not None
        return Reading(False, "the refusal names no location, id or known violation", vague=vague)
    return Reading(True, "", codes, message_index, block_index, block_is_call, ids, message)


def _location(message: str, key: str) -> tuple[int | None, int | None, bool]:
    found = _LOCATION[key].search(message)
    if found is not None:
        block = int(found[2]) if found[2] is not None else None
        return int(found[1]), block, block is not None and "tool_calls" in found[0]
    words = _INDEX_WORDS.search(message)
    if words is not None:
        return int(words[1] or words[2]), None, False
    return None, None, False


def _matching_codes(message: str) -> list[str]:
    return [code for code, pattern in _templates() if pattern.search(message)]


@cache
def _templates() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each registry template as a pattern: its text literal, each ``{placeholder}`` any run of text."""
    compiled = []
    for entry in REGISTRY.values():
        for template in entry.templates:
            pieces = re.split(r"\{[a-z_]+\}", template.strip())
            # Providers append to their texts (request ids, links); the template's start is enough.
            pattern = r"[^\n]*?".join(re.escape(p) for p in pieces)
            compiled.append((entry.code, re.compile(pattern)))
    return tuple(compiled)


def _ids_in(items: list[Any]) -> list[str]:
    """Every tool-call and item id of the transcript, in order, each once."""
    found: dict[str, None] = {}
    for value in _walk(items):
        found[value] = None
    return list(found)


_ID_KEYS = frozenset({"id", "call_id", "tool_call_id", "tool_use_id", "toolUseId"})


def _walk(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for k, v in current.items():
                if k in _ID_KEYS and isinstance(v, str):
                    out.append(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(current, list):
            stack.extend(reversed(current))
    return out


def _quoted(identifier: str, message: str) -> bool:
    at = message.find(identifier)
    while at >= 0:
        before = message[at - 1] if at else " "
        end = at + len(identifier)
        after = message[end] if end < len(message) else " "
        # A whole token: not the middle of a longer id.
        if not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-"):
            return True
        at = message.find(identifier, at + 1)
    return False
