"""Read a request body the way users have it, and tell which API it speaks.

A payload arrives as a raw request body, a JSON log line with the body somewhere inside (maybe
as a JSON-encoded string), a full HTTP dump, an error report with the body pasted into it, a
Suture capture file or a golden fixture. :func:`read_payload` finds the body in any of them;
:func:`detect_api` names the wire format from the body's shape and says why.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import provider_table
from .capture import SAFE_HEADERS
from .routes.off_loop import TRANSCRIPT_KEYS as _TRANSCRIPT_KEYS

_REQUEST_LINE = re.compile(r"^(POST|PUT|PATCH|GET) (\S+) HTTP/\d(?:\.\d)?\s*$")
# How a request path gives its format away: the route table's markers (`/chat/completions`...).
_API_OF_PATH = tuple((marker, route.api) for route in provider_table.ROUTES for marker in route.markers)


class PayloadError(Exception):
    """The input holds no request body Suture can use; ``str(e)`` is one line for a human."""


@dataclass(frozen=True)
class Payload:
    """A request body found in some input, with what is known about where it came from."""

    body: dict[str, Any]
    api: str
    reason: str
    """Why ``api``: "given with --api", or the shape or path that gave it away."""
    form: str
    """The kind of input the body was found in: "request body", "HTTP dump", "Suture capture"..."""
    source: str = "<input>"
    path: str | None = None
    """The request path, when the input names it (an HTTP dump, a capture)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The input's request headers that are in :data:`SAFE_HEADERS`; never a credential."""


def read_payload(path: str | Path, *, api: str | None = None) -> Payload:
    """Read the file at ``path`` (``-`` is stdin) and find the request body in it.

    Raises :class:`PayloadError` naming the file and the reason.
    """
    source = str(path)
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise PayloadError(f"{source}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    return parse_payload(text, source=source, api=api)


def parse_payload(text: str, *, source: str = "<input>", api: str | None = None) -> Payload:
    """Find the request body in ``text`` (any of the forms in the module docstring)."""
    if not text.strip():
        raise PayloadError(f"{source}: the file is empty")
    try:
        found = _find(text)
    except RecursionError:
        raise PayloadError(
            f"{source}: its JSON is nested too deeply to read (Python's limit is about 1,000 levels)"
        ) from None
    if found is None:
        raise PayloadError(f"{source}: no request body found ({_why_none(text)})")
    body, form, path, headers, known_api = found
    if api is not None:
        reason = "given with --api"
    elif known_api is not None:
        api, reason = known_api, f"the {form} names it"
    else:
        api, reason = detect_api(body, path=path, headers=headers)
    return Payload(body=body, api=api, reason=reason, form=form, source=source, path=path, headers=headers)


_Found = tuple[dict[str, Any], str, str | None, dict[str, str], str | None]


def _why_none(text: str) -> str:
    """What to tell a user whose input held no body: where it stops being JSON, when it looks like JSON."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            json.loads(stripped)
        except json.JSONDecodeError as exc:
            if exc.pos >= len(stripped) - 1:
                # Loggers and terminals cut long bodies: the usual way a captured 400 payload breaks.
                return (
                    f"the JSON stops after {len(stripped)} characters, before it is complete: "
                    "the file holds only the start of a body (a log or a terminal may have cut it)"
                )
            return f"the file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    return "no JSON object with `messages`, `input` or `contents`"


def _find(text: str) -> _Found | None:
    dump = _http_dump(text)
    if dump is not None:
        return dump
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        if whole.get("suture_capture") and _is_body(whole.get("original")):
            headers = whole.get("headers")
            return (
                whole["original"],
                "Suture capture",
                whole.get("path") if isinstance(whole.get("path"), str) else None,
                _safe_headers(headers.items() if isinstance(headers, dict) else ()),
                whole.get("api") if isinstance(whole.get("api"), str) else None,
            )
        if _is_body(whole):
            return whole, "request body", None, {}, None
        if _is_body(whole.get("before")) and "after" in whole:
            known = whole.get("api") if isinstance(whole.get("api"), str) else None
            return whole["before"], "golden fixture", None, {}, known
    if whole is not None:
        body = _search(whole)
        if body is not None:
            return body, "JSON log line", None, {}, None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        # A JSON-lines log: the last request in it is the one that failed.
        for number in range(len(lines), 0, -1):
            try:
                record = json.loads(lines[number - 1])
            except ValueError:
                continue
            body = _search(record)
            if body is not None:
                return body, f"JSON log line {number} of {len(lines)}", None, {}, None
    body = _embedded(text)
    if body is not None:
        return body, "body embedded in text", None, {}, None
    return None


def _http_dump(text: str) -> _Found | None:
    head, _, rest = text.lstrip().partition("\n")
    match = _REQUEST_LINE.match(head.rstrip("\r"))
    if match is None:
        return None
    headers: list[tuple[str, str]] = []
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        line = line.rstrip("\r")
        if not line:
            payload = "\n".join(lines[i + 1 :])
            break
        name, colon, value = line.partition(":")
        if colon:
            headers.append((name.strip().lower(), value.strip()))
    else:
        return None
    try:
        body = json.loads(payload)
    except ValueError:
        body = _search_text(payload)
    if not _is_transcript(body):
        return None
    assert isinstance(body, dict)
    return body, "HTTP dump", match.group(2), _safe_headers(headers), None


def _safe_headers(items: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in items if str(k).lower() in SAFE_HEADERS and isinstance(v, str | int)}


def _is_transcript(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    # `input` must be a list: a tool_use block's `input` is an object, an embeddings request's a string.
    return any(isinstance(value.get(key), list) for key in _TRANSCRIPT_KEYS)


def _is_body(value: Any) -> bool:
    # Where the input says "this is the body", a string `input` is a (one-turn) Responses request too.
    one_turn = isinstance(value, dict) and isinstance(value.get("input"), str) and "model" in value
    return one_turn or _is_transcript(value)


def _search(value: Any, depth: int = 0) -> dict[str, Any] | None:
    """The shallowest transcript-bearing object in ``value``, looking inside JSON-encoded strings too."""
    queue: deque[Any] = deque([value])
    strings: list[str] = []
    while queue:
        item = queue.popleft()
        if _is_transcript(item):
            result: dict[str, Any] = item
            return result
        if isinstance(item, dict):
            queue.extend(item.values())
        elif isinstance(item, list):
            queue.extend(item)
        elif isinstance(item, str) and "{" in item and any(k in item for k in _TRANSCRIPT_KEYS):
            strings.append(item)
    if depth < 3:
        for string in strings:
            found = _search_text(string, depth + 1)
            if found is not None:
                return found
    return None


def _search_text(text: str, depth: int = 0) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return _embedded(text, depth)
    return _search(value, depth)


def _embedded(text: str, depth: int = 0) -> dict[str, Any] | None:
    """The largest balanced ``{...}`` in ``text`` that parses (as JSON or a Python dict repr)
    and holds a transcript."""
    spans = sorted(_balanced_spans(text), key=lambda s: s[0] - s[1])
    for start, end in spans:
        chunk = text[start:end]
        if not any(key in chunk for key in _TRANSCRIPT_KEYS):
            continue
        value = _parse_object(chunk)
        if value is not None:
            found = _search(value, depth)
            if found is not None:
                return found
    return None


def _parse_object(chunk: str) -> Any:
    try:
        return json.loads(chunk)
    except ValueError:
        pass
    # Python SDKs log request options as a dict repr: {'messages': [...], 'stream': False}.
    try:
        return ast.literal_eval(chunk)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _balanced_spans(text: str) -> Iterator[tuple[int, int]]:
    """Every ``{...}`` span whose braces balance, skipping braces inside quoted strings."""
    stack: list[int] = []
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char == "{":
            stack.append(i)
        elif char == "}":
            if stack:
                yield stack.pop(), i + 1
        elif char in "\"'" and stack:
            # Prose around the object is not tracked: an apostrophe there is not a string.
            quote = char


def detect_api(
    body: Mapping[str, Any], *, path: str | None = None, headers: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The wire format ``body`` speaks and why: ``("anthropic-messages", "it has top-level `system`")``."""
    if path is not None:
        lowered = path.split("?")[0].lower()
        for suffix, api in _API_OF_PATH:
            if lowered.endswith(suffix) or (suffix.startswith(":") and suffix in lowered):
                return api, f"the request path is {path}"
    if headers and "anthropic-version" in headers:
        return "anthropic-messages", "the request has an anthropic-version header"
    if isinstance(body.get("contents"), list):
        return "gemini", "it has `contents`"
    if isinstance(body.get("input"), list | str) and not isinstance(body.get("messages"), list):
        return "openai-responses", "it has `input` and no `messages`"
    messages = body.get("messages")
    messages = messages if isinstance(messages, list) else []
    anthropic, openai, bedrock = _markers(body, messages)
    if bedrock and not anthropic and not openai:
        return "bedrock-converse", "it has " + _join(bedrock)
    if anthropic and len(anthropic) >= len(openai):
        return "anthropic-messages", "it has " + _join(anthropic)
    if openai:
        return "openai-chat", "it has " + _join(openai)
    if "max_tokens" in body:
        return "anthropic-messages", "it has `max_tokens` (which Anthropic requires) and no OpenAI markers"
    return "openai-chat", "it has `messages` and no Anthropic markers"


def _markers(body: Mapping[str, Any], messages: list[Any]) -> tuple[list[str], list[str], list[str]]:
    anthropic: list[str] = []
    openai: list[str] = []
    bedrock: list[str] = []
    system = body.get("system")
    if isinstance(system, list) and system and all(isinstance(b, dict) and "type" not in b for b in system):
        bedrock.append("`system` blocks without a type")
    elif system is not None:
        anthropic.append("top-level `system`")
    for key in ("inferenceConfig", "toolConfig", "modelId"):
        if key in body:
            bedrock.append(f"`{key}`")
    tools = body.get("tools")
    if isinstance(tools, list):
        for tool in tools:
            if isinstance(tool, dict) and "input_schema" in tool:
                anthropic.append("tools with `input_schema`")
                break
            if isinstance(tool, dict) and tool.get("type") == "function":
                openai.append('tools of type "function"')
                break
    block_types: set[str] = set()
    roles: set[str] = set()
    has_tool_calls = False
    for message in messages:
        if not isinstance(message, dict):
            continue
        roles.add(str(message.get("role")))
        has_tool_calls = has_tool_calls or "tool_calls" in message or "tool_call_id" in message
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    if isinstance(block.get("type"), str):
                        block_types.add(block["type"])
                    else:
                        block_types.update(k for k in ("toolUse", "toolResult") if k in block)
    found = sorted(block_types & {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"})
    if found:
        anthropic.append(" and ".join(found) + " blocks")
    if block_types & {"toolUse", "toolResult"}:
        bedrock.append("toolUse/toolResult blocks")
    if has_tool_calls:
        openai.append("`tool_calls`")
    found_roles = sorted(roles & {"tool", "system", "developer", "function"})
    if found_roles:
        openai.append("messages with role " + "/".join(found_roles))
    if block_types & {"image_url", "input_audio"}:
        openai.append("image_url/input_audio parts")
    return anthropic, openai, bedrock


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
