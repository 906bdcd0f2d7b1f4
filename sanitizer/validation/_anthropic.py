"""Anthropic Messages rules (catalogue section 1), checked on the merged view of the transcript.

Check order, which is the order of the returned list (Anthropic reports only the first):

1. schema and field checks, in body order: A12 (id pattern on ``tool_use.id`` and
   ``tool_result.tool_use_id``, and Anthropic's own ``srvtoolu_`` pattern on ``server_tool_use.id``
   and on its result's ``tool_use_id``), A18 (``tool_use.input`` is an object), the ``system`` role
   inside ``messages`` (A10-system on a model that takes none, ``anthropic.system-placement`` for a
   run placed where one that does refuses it: the capability table, ``sanitizer.capabilities``),
   ``anthropic.thinking-signature`` (a ``thinking`` block's required
   ``signature``; Bedrock also reads an empty one as missing); then A19 (unique tool names);
2. text checks: the same two on the top-level ``system`` (``A6-system`` / ``A7-system``; which
   of ``system`` and ``messages`` Anthropic checks first is not known), A6 / A7 (empty or
   whitespace-only text, in body order; a whitespace-only block next to text that says something
   passes), A8 (final assistant text ending in whitespace);
3. message checks: A10 on Bedrock (the first message must be the user's), A5 (empty content
   except the final assistant message), then
   ``anthropic.tools-required`` (tool blocks without ``tools``, from PEERS.md section 0);
4. pairing on the merged view (A9), turn by turn: A11 (duplicate ``tool_use`` id, at the second
   occurrence), A2 for server-tool results, A4, A1 (for an assistant turn), then A2 and
   ``anthropic.duplicate-result`` (for a user turn);
5. A17 (final assistant message on a model without prefill), then the thinking checks:
   ``anthropic.thinking-first`` (an assistant message holding thinking must start with it),
   ``anthropic.thinking-final`` (the final assistant message may not end in thinking, nor hold
   any when thinking is disabled), both from PEERS.md section 0, then A13, then A15 for an empty
   signature (Anthropic and Vertex; DeepSeek's endpoint signs nothing and is not checked).

A1 also covers the two placements the API treats as "not immediately after": a ``tool_result``
after other content in the next user turn (A3), and any block after a ``tool_use`` in the same
merged assistant turn: text (a recorded real-API response, PEERS.md 11.3: ``[tool_use, text]`` is
rejected, ``[text]`` then ``[tool_use]`` as two messages is accepted), a server tool's use and
result (vercel/ai#13013), thinking. When every call it names does have its result at the start
of the next turn, the error names that next message, as the recorded response does
(``messages.1`` for the assistant message 0 and its results in message 1); otherwise it names
the assistant turn.

Merging (A9): consecutive messages with the same role are one turn; a system message is no turn
(it was judged for its place in the schema checks) and the turns around it are read as if it were
not there. Message-level errors
print the index of the first message of the run; block-level errors print the block's own
message and block index in the body as sent.

DeepSeek's Anthropic-compatible endpoint (profile ``deepseek-anthropic-compat``) answers in
DeepSeek's error body. Its own text is known for one rule only: when DeepSeek thinks (V4 models
unless ``thinking`` is disabled, ``thinking`` enabled, ``deepseek-reasoner``), every assistant
message with a ``tool_use`` must carry a thinking block, or it answers D3 ("The
`content[].thinking` in the thinking mode must be passed back to the API.", decolua/9router#2397,
where Anthropic would have answered A13 for the same body); D3 replaces A13 there, last in the
order. A ``redacted_thinking`` block counts as thinking (what the endpoint makes of one is not
known, so it is not reported). For the other rules its texts are not known, and Anthropic's are
used.

Not checked: A1-hist, A9-hist and A16 ([hist]), and A10 ([hist]) but on Bedrock; A14, and A15
for a non-empty signature (whether a thinking block or signature is the one the API issued needs
the API's state); the 64-character id limit (A12 note: the error text is unknown); the "no
`web_search` tool was provided" error (only the end of its text is known).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .._errors import SanitizeError
from .._media import mislabelled
from ..capabilities import NONE, Capabilities
from ._envelope import violation
from ._openai_chat import D3_ANTHROPIC, deepseek_thinks
from ._shape import as_dict, as_list, as_str, body_dict, required_list
from ._violation import Violation

_ID = re.compile(r"[a-zA-Z0-9_-]+")
# A server tool's use and its result: Anthropic's own ids (the API schema's pattern).
_SERVER_ID = re.compile(r"srvtoolu_[a-zA-Z0-9_]+")
_THINKING = ("thinking", "redacted_thinking")
# Models reported to reject a final assistant message (A17 sources).
_NO_PREFILL = (
    "claude-opus-4-6",
    "claude-opus-4-7",
    "claude-opus-4-8",
    "claude-sonnet-4-6",
    "claude-sonnet-5",
    "claude-fable-5",
)

A1 = (
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
A2 = (
    "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
A2_SERVER = (
    "messages.{n}.content.{m}: unexpected `tool_use_id` found in `{type}` blocks: {id}. "
    "Each `{type}` block must have a corresponding `server_tool_use` block before it."
)
A4 = "messages.{n}: `{name}` tool use with id `{id}` was found without a corresponding `{name}_tool_result` block"
A5 = "messages.{n}: all messages must have non-empty content except for the optional final assistant message"
A6 = "messages: text content blocks must be non-empty"
A7 = "messages: text content blocks must contain non-whitespace text"
# The same two checks on the top-level ``system`` (a string counts as one text block: an empty
# one gets the first text, t8y2/dbx PR#1298), not in the catalogue. There a blank block is refused
# even between blocks that say something (agentjido/req_llm#711, anomalyco/opencode#35101).
A6_SYSTEM = "system: text content blocks must be non-empty"
A7_SYSTEM = "system: text content blocks must contain non-whitespace text"
A8 = "messages: final assistant content cannot end with trailing whitespace"
# Anthropic's own API has taken a conversation that opens with the assistant since about 2024-12
# (anthropics/anthropic-sdk-typescript#622, cloudwego/eino-ext#710); Bedrock's was last reported
# refusing it then (A10 [hist]: #622, langchain4j/langchain4j#1864), and is checked for it.
A10 = 'messages: first message must use the "user" role'
# A system message inside messages, on a model that takes none there (the capability table,
# sanitizer.capabilities): the API's text since Claude Opus 4.8 came (anthropics/claude-code#61242
# and #61412, 2026-05, on Opus 4.7; gproxy-transform's claude_mid_conv_system), and the one before
# it (A10-system in the catalogue), still read in a refusal.
A10_SYSTEM = "role 'system' is not supported on this model"
A10_SYSTEM_BEFORE = (
    'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
    'not "system" as an input message role.'
)
# On a model that takes them, a run of system messages that does not follow a user message (or an
# assistant message ending in a server tool's use or result), or is neither last nor followed by
# an assistant message, or opens messages (platform.claude.com, Mid-conversation system messages:
# "Any other position ... returns a 400 error"). The text is a live 400 quoted in a public client's
# tests (its messages.28, a run after an assistant message); the texts for the other misplacements
# are not known, and this one is used for them.
SYSTEM_PLACEMENT = (
    "messages.{n}: role 'system' must follow a 'user' message or an 'assistant' message ending in a server tool result"
)
A11 = "messages.{n}.content.{m}: `tool_use` ids must be unique"
A12 = "messages.{n}.content.{m}.{field}: String should match pattern '^[a-zA-Z0-9_-]+$'"
# ding113/claude-code-hub#470 (server_tool_use.id); a result's tool_use_id has the same pattern in
# the API's schema, and the field path is printed as for tool_result.
A12_SERVER = "messages.{n}.content.{m}.{field}: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'"
A13 = (
    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
    "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
# The same check in other words, without the parenthesis: on Vertex (NoeFabris/opencode-antigravity-auth#50,
# 2025-12) and on the API itself (req_011CWuPJ..., 2026-01) in the weeks the long text was answered
# too; what picks one is not known, so the validator writes the long one and a refusal is read in either.
A13_SHORT = (
    "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block. We recommend"
)
A15 = "messages.{n}.content.{m}: Invalid `signature` in `thinking` block"
A17 = "This model does not support assistant message prefill. The conversation must end with a user message."
A18 = "messages.{n}.content.{m}.tool_use.input: Input should be a valid dictionary"
A19 = "tools: Tool names must be unique."
A20 = "messages: at least one message is required"
# An image whose bytes are another type than its media_type says: llxprt-code#2130 (2026, this
# wording, in a tool result), anthropics/claude-code#6300 and #15746 (2025: "...base64.data: Image
# does not match the provided media type image/png").
A21 = (
    "messages.{n}.content.{m}.{where}image.source.base64: The image was specified using the {declared} "
    "media type, but the image appears to be a {actual} image"
)
TOOLS_REQUIRED = "Requests which include `tool_use` or `tool_result` blocks must define tools."
# Reported by goose (PEERS.md section 0) without a path prefix; kept as reported.
DUPLICATE_RESULT = "each tool_use must have a single result. Found multiple tool_result blocks with id: {id}"

# Thinking placement errors reported in PEERS.md section 0 (texts as users pasted them).
THINKING_FIRST = (
    "If an assistant message contains any thinking blocks, the first block must be thinking or "
    "redacted_thinking. Found {found}."
)
THINKING_FINAL_BLOCK = "The final block in an assistant message cannot be `thinking`."
THINKING_DISABLED_FINAL = (
    "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`."
)
# A thinking block without its signature, a schema error (lbjlaq/Antigravity-Manager#1650 on Vertex).
# Bedrock gives it for an empty signature too (can1357/oh-my-pi PR#10486, earendil-works/pi#2063);
# Anthropic itself takes "" as a string and fails its signature check instead (A15, the same PR).
THINKING_SIGNATURE = "messages.{n}.content.{m}.thinking.signature: Field required"
# The profiles that check thinking signatures: DeepSeek's endpoint makes its own thinking blocks (and
# answers D3 for thinking), and the Chat conversions carry no thinking block.
_SIGNED = ("anthropic", "bedrock", "vertex")

Block = tuple[int, int, dict[str, Any]]


@dataclass
class _Turn:
    role: str
    first: int
    blocks: list[Block] = field(default_factory=list)


class _Out:
    def __init__(self, provider: str, index_map: list[int] | None) -> None:
        self.provider = provider
        self.index_map = index_map
        self.items: list[Violation] = []

    def add(self, rule: str, message: str, index: int | None) -> None:
        if index is not None and self.index_map is not None:
            index = self.index_map[index]
        self.items.append(violation(self.provider, f"anthropic.{rule}", message, index))


def validate_anthropic(
    body: object, provider: str, index_map: list[int] | None = None, *, capabilities: Capabilities = NONE
) -> list[Violation]:
    """Anthropic's rules for a Messages body; ``index_map`` maps printed indexes to body indexes;
    ``capabilities`` are the model's (``sanitizer.capabilities``)."""
    b = body_dict(body)
    messages = required_list(b, "messages")
    out = _Out(provider, index_map)
    if not messages:
        out.add("A20", A20, None)
        return out.items
    parsed = parse_messages(messages)
    last = len(parsed) - 1

    _schema(parsed, out, provider, _refused_system(parsed, capabilities))
    _tool_names(b, out)
    _system_texts(b.get("system"), out)
    _texts(parsed, out)
    if provider in _SIGNED:
        _images(parsed, out)
    role, content = parsed[last]
    if role == "assistant":
        tail = content if isinstance(content, str) else _last_text(content)
        if tail and tail.strip() and tail[-1].isspace():
            out.add("A8", A8, last)
    if provider == "bedrock" and parsed[0][0] == "assistant":
        out.add("A10", A10, 0)
    for i, (role, content) in enumerate(parsed):
        if content in ("", []) and not (i == last and role == "assistant"):
            out.add("A5", A5.format(n=i), i)
    _tools_required(b, parsed, out)

    turns = _merge(parsed)
    _pairing(turns, out)
    model = b.get("model")
    if parsed[last][0] == "assistant" and isinstance(model, str) and model.startswith(_NO_PREFILL):
        out.add("A17", A17, last)
    thinking = b.get("thinking")
    # Adaptive thinking's round-trip rules are manual thinking's ("The round-trip rules are
    # identical", platform.claude.com, Thinking in tool and multi-turn workflows).
    # Manual thinking only: under adaptive thinking the model may skip a turn's thinking, and the
    # API takes the turn it wrote without it.
    enabled = isinstance(thinking, dict) and thinking.get("type") == "enabled"
    _thinking_placement(parsed, enabled, out)
    if provider == "deepseek-anthropic-compat":
        if deepseek_thinks(b):
            _deepseek_thinking(parsed, out)
    elif enabled:
        _thinking(turns, out)
    if provider in _SIGNED and provider != "bedrock":
        # Bedrock refused an empty signature in the schema check already.
        _empty_signatures(parsed, out)
    return out.items


def parse_messages(messages: list[Any]) -> list[tuple[str, str | list[dict[str, Any]]]]:
    """Each message's role and content (a string or its blocks), shape-checked."""
    parsed: list[tuple[str, str | list[dict[str, Any]]]] = []
    for i, raw in enumerate(messages):
        m = as_dict(raw, f"messages[{i}]")
        role = as_str(m.get("role"), f"messages[{i}].role")
        if role not in ("user", "assistant", "system"):
            raise SanitizeError(f"messages[{i}].role", f"must be 'user' or 'assistant', not {role!r}")
        if "content" not in m:
            raise SanitizeError(f"messages[{i}].content", "is required")
        content = m["content"]
        if isinstance(content, str):
            parsed.append((role, content))
            continue
        blocks = as_list(content, f"messages[{i}].content")
        for j, raw_block in enumerate(blocks):
            path = f"messages[{i}].content[{j}]"
            block = as_dict(raw_block, path)
            kind = as_str(block.get("type"), f"{path}.type")
            if kind in ("tool_use", "server_tool_use"):
                as_str(block.get("id"), f"{path}.id")
                if kind == "tool_use" and "input" not in block:
                    raise SanitizeError(f"{path}.input", "is required")
                if kind == "server_tool_use":
                    as_str(block.get("name"), f"{path}.name")
            elif kind == "tool_result" or kind.endswith("_tool_result"):
                as_str(block.get("tool_use_id"), f"{path}.tool_use_id")
                nested = block.get("content")
                if kind == "tool_result" and isinstance(nested, list):
                    for k, raw_part in enumerate(nested):
                        part = as_dict(raw_part, f"{path}.content[{k}]")
                        if as_str(part.get("type"), f"{path}.content[{k}].type") == "text":
                            as_str(part.get("text"), f"{path}.content[{k}].text")
            elif kind == "text":
                as_str(block.get("text"), f"{path}.text")
        parsed.append((role, blocks))
    return parsed


def _refused_system(parsed: list[tuple[str, str | list[dict[str, Any]]]], capabilities: Capabilities) -> dict[int, str]:
    """The system messages the API refuses, by index: each one on a model that takes none; on one
    that does, the first of each run placed where it may not stand."""
    refused: dict[int, str] = {}
    roles = [role for role, _ in parsed]
    start = None
    for i, role in enumerate([*roles, None]):
        if role == "system":
            if start is None:
                start = i
            if not capabilities.mid_conversation_system:
                refused[i] = "A10-system"
            continue
        if start is not None and capabilities.mid_conversation_system:
            before = parsed[start - 1] if start else None
            after_user = before is not None and before[0] == "user"
            if not (after_user or _ends_in_server_tool(before)) or role not in (None, "assistant"):
                refused[start] = "system-placement"
        start = None
    return refused


def _ends_in_server_tool(message: tuple[str, str | list[dict[str, Any]]] | None) -> bool:
    """An assistant message whose last block is a server tool's use or result, with no client call
    waiting for its result."""
    if message is None or message[0] != "assistant" or isinstance(message[1], str) or not message[1]:
        return False
    kinds = [block["type"] for block in message[1]]
    last = kinds[-1]
    server = last in ("server_tool_use", "mcp_tool_use") or (last.endswith("_tool_result") and last != "tool_result")
    return server and "tool_use" not in kinds


def _schema(
    parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out, provider: str, refused: dict[int, str]
) -> None:
    # Bedrock reads an empty signature as a missing one.
    unsigned = ("",) if provider == "bedrock" else ()
    for i, (_, content) in enumerate(parsed):
        if refused.get(i) == "A10-system":
            out.add("A10-system", A10_SYSTEM, i)
        elif i in refused:
            out.add("system-placement", SYSTEM_PLACEMENT.format(n=i), i)
        if isinstance(content, str):
            continue
        for j, block in enumerate(content):
            kind = block["type"]
            if kind == "tool_use":
                if not _ID.fullmatch(block["id"]):
                    out.add("A12", A12.format(n=i, m=j, field="tool_use.id"), i)
                if not isinstance(block["input"], dict):
                    out.add("A18", A18.format(n=i, m=j), i)
            elif kind == "tool_result" and not _ID.fullmatch(block["tool_use_id"]):
                out.add("A12", A12.format(n=i, m=j, field="tool_result.tool_use_id"), i)
            elif kind == "server_tool_use" and not _SERVER_ID.fullmatch(block["id"]):
                out.add("A12", A12_SERVER.format(n=i, m=j, field="server_tool_use.id"), i)
            elif _server_result(kind) and not _SERVER_ID.fullmatch(block["tool_use_id"]):
                out.add("A12", A12_SERVER.format(n=i, m=j, field=f"{kind}.tool_use_id"), i)
            elif (
                kind == "thinking"
                and provider in _SIGNED
                and ("signature" not in block or block["signature"] in unsigned)
            ):
                out.add("thinking-signature", THINKING_SIGNATURE.format(n=i, m=j), i)


def _server_result(kind: str) -> bool:
    # An MCP connector's result answers an mcp_tool_use, whose ids are not server tool ids.
    return kind.endswith("_tool_result") and kind not in ("tool_result", "mcp_tool_result")


def _tool_names(b: dict[str, Any], out: _Out) -> None:
    tools = b.get("tools")
    if tools is None:
        return
    seen: set[str] = set()
    for k, raw in enumerate(as_list(tools, "tools")):
        name = as_dict(raw, f"tools[{k}]").get("name")
        if isinstance(name, str):
            if name in seen:
                out.add("A19", A19, None)
                return
            seen.add(name)


def _system_texts(system: object, out: _Out) -> None:
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system
    if not isinstance(blocks, list):
        return
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if text == "":
            out.add("A6-system", A6_SYSTEM, None)
        elif isinstance(text, str) and not text.strip():
            out.add("A7-system", A7_SYSTEM, None)


def _texts(parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out) -> None:
    final = _final_assistant_run([role for role, _ in parsed])
    for i, (_, content) in enumerate(parsed):
        if isinstance(content, str):
            if content and not content.strip():
                out.add("A7", A7, i)
            continue
        # A whitespace-only block passes in a message whose other text says something (a live test,
        # LibreChat-AI/agents PR#124); the final assistant turn, whose trailing whitespace is A8's
        # concern, and tool_result contents, which that test did not cover, keep the strict check.
        lenient = i < final and _says_something(content)
        for block in content:
            _text_block(block, i, out, lenient)
            nested = block.get("content")
            if block["type"] == "tool_result" and isinstance(nested, list):
                for part in nested:
                    _text_block(part, i, out, False)


def _images(parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out) -> None:
    for i, (_, content) in enumerate(parsed):
        if isinstance(content, str):
            continue
        for j, block in enumerate(content):
            nested = block.get("content") if block["type"] == "tool_result" else None
            found = [("", block)] if block["type"] == "image" else []
            if isinstance(nested, list):
                found += [(f"tool_result.content.{k}.", part) for k, part in enumerate(nested)]
            for where, image in found:
                wrong = mislabelled(image)
                if wrong is not None:
                    text = A21.format(n=i, m=j, where=where, declared=wrong[0], actual=wrong[1])
                    out.add("A21", text, i)


def _final_assistant_run(roles: list[str]) -> int:
    """Where the trailing run of assistant messages (the final assistant turn) starts; the length
    of ``roles`` if the conversation ends with another role."""
    start = len(roles)
    while start and roles[start - 1] == "assistant":
        start -= 1
    return start


def _says_something(blocks: list[Any]) -> bool:
    """Whether a message's content holds a text block that is not only whitespace."""
    return any(
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and block["text"].strip()
        for block in blocks
    )


def _text_block(block: dict[str, Any], i: int, out: _Out, lenient: bool) -> None:
    if block.get("type") != "text":
        return
    text = block["text"]
    if not text:
        out.add("A6", A6, i)
    elif not text.strip() and not lenient:
        out.add("A7", A7, i)


def _last_text(blocks: list[dict[str, Any]]) -> str:
    if blocks and blocks[-1]["type"] == "text":
        text: str = blocks[-1]["text"]
        return text
    return ""


def _tools_required(b: dict[str, Any], parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out) -> None:
    if b.get("tools"):
        return
    for i, (_, content) in enumerate(parsed):
        if not isinstance(content, str) and any(x["type"] in ("tool_use", "tool_result") for x in content):
            out.add("tools-required", TOOLS_REQUIRED, i)
            return


def _merge(parsed: list[tuple[str, str | list[dict[str, Any]]]]) -> list[_Turn]:
    turns: list[_Turn] = []
    for i, (role, content) in enumerate(parsed):
        if role == "system":
            # Not a turn: where the model takes none, or where it stands, it was reported already.
            continue
        if not turns or turns[-1].role != role:
            turns.append(_Turn(role, i))
        if isinstance(content, str):
            turns[-1].blocks.append((i, 0, {"type": "text", "text": content}))
        else:
            turns[-1].blocks.extend((i, j, block) for j, block in enumerate(content))
    return turns


def _leading_results(turn: _Turn) -> set[str]:
    # Anthropic counts only the tool_result blocks that open the message (A3).
    ids: set[str] = set()
    for _, _, block in turn.blocks:
        if block["type"] != "tool_result":
            break
        ids.add(block["tool_use_id"])
    return ids


def _pairing(turns: list[_Turn], out: _Out) -> None:
    seen: set[str] = set()
    last = len(turns) - 1
    previous_calls: set[str] = set()
    for t, turn in enumerate(turns):
        if turn.role == "assistant":
            calls: dict[str, None] = {}
            servers: dict[str, tuple[int, str]] = {}
            # An MCP connector's calls, answered by mcp_tool_result blocks (what the API returns for
            # them is taken back; the texts it gives for an unpaired one are not known).
            mcp_calls: set[Any] = set()
            # Anything after a tool_use in the same (merged) turn separates it from its results (PEERS.md
            # 11.3): the calls made before the turn's last other block, the first ``cut_off`` of ``calls``.
            cut_off = 0
            for i, j, block in turn.blocks:
                kind = block["type"]
                if kind != "tool_use":
                    cut_off = len(calls)
                if kind == "tool_use":
                    ident = block["id"]
                    if ident in seen:
                        out.add("A11", A11.format(n=i, m=j), i)
                    seen.add(ident)
                    calls[ident] = None
                elif kind == "server_tool_use":
                    servers[block["id"]] = (i, block["name"])
                elif kind == "mcp_tool_use":
                    mcp_calls.add(block.get("id"))
                elif kind == "mcp_tool_result" and block["tool_use_id"] in mcp_calls:
                    mcp_calls.discard(block["tool_use_id"])
                elif kind.endswith("_tool_result") and kind != "tool_result":
                    ident = block["tool_use_id"]
                    if servers.pop(ident, None) is None:
                        out.add("A2", A2_SERVER.format(n=i, m=j, type=kind, id=ident), i)
            nxt = turns[t + 1] if t < last else None
            # pause_turn: a server tool use may wait in the final assistant turn, or (deferred next to
            # client calls) when the only thing after it is a turn of tool_result blocks.
            deferred = t == last or (
                bool(calls)
                and t + 1 == last
                and nxt is not None
                and all(block["type"] == "tool_result" for _, _, block in nxt.blocks)
            )
            if not deferred:
                for ident, (i, name) in servers.items():
                    out.add("A4", A4.format(n=i, name=name, id=ident), i)
            answered = _leading_results(nxt) if nxt is not None and nxt.role == "user" else set()
            missing = [ident for n, ident in enumerate(calls) if ident not in answered or n < cut_off]
            if missing:
                # Calls whose results do follow, cut off only by what comes after them in the turn.
                where = nxt.first if nxt is not None and all(ident in answered for ident in missing) else turn.first
                out.add("A1", A1.format(n=where, ids=", ".join(missing)), where)
            previous_calls = set(calls)
            continue
        if turn.role == "user":
            results: set[str] = set()
            for i, j, block in turn.blocks:
                if block["type"] != "tool_result":
                    continue
                ident = block["tool_use_id"]
                if ident not in previous_calls:
                    out.add("A2", A2.format(n=i, m=j, id=ident), i)
                elif ident in results:
                    out.add("duplicate-result", DUPLICATE_RESULT.format(id=ident), i)
                results.add(ident)
        previous_calls = set()


def _thinking_placement(parsed: list[tuple[str, str | list[dict[str, Any]]]], enabled: bool, out: _Out) -> None:
    for i, (role, content) in enumerate(parsed):
        if role != "assistant" or isinstance(content, str) or not content:
            continue
        kinds = [block["type"] for block in content]
        if any(k in _THINKING for k in kinds) and kinds[0] not in _THINKING:
            out.add("thinking-first", THINKING_FIRST.format(found=kinds[0]), i)
        if i == len(parsed) - 1 and any(k in _THINKING for k in kinds):
            if not enabled:
                out.add("thinking-final", THINKING_DISABLED_FINAL, i)
            elif kinds[-1] in _THINKING:
                out.add("thinking-final", THINKING_FINAL_BLOCK, i)


def _empty_signatures(parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out) -> None:
    for i, (_, content) in enumerate(parsed):
        if isinstance(content, str):
            continue
        for j, block in enumerate(content):
            if block["type"] == "thinking" and block.get("signature") == "":
                out.add("A15", A15.format(n=i, m=j), i)


def _deepseek_thinking(parsed: list[tuple[str, str | list[dict[str, Any]]]], out: _Out) -> None:
    """DeepSeek's D3 on its Anthropic endpoint: each tool-calling assistant message keeps its thinking."""
    for i, (role, content) in enumerate(parsed):
        if role != "assistant" or isinstance(content, str):
            continue
        kinds = {block["type"] for block in content}
        if "tool_use" in kinds and kinds.isdisjoint(_THINKING):
            index = out.index_map[i] if out.index_map is not None else i
            out.items.append(violation(out.provider, "deepseek.D3", D3_ANTHROPIC, index))


def _thinking(turns: list[_Turn], out: _Out) -> None:
    if len(turns) < 2:
        return
    final = turns[-1]
    if final.role != "user" or turns[-2].role != "assistant":
        return
    if not any(block["type"] == "tool_result" for _, _, block in final.blocks):
        return
    head = turns[-2]
    found = head.blocks[0][2]["type"] if head.blocks else "text"
    if found not in _THINKING:
        out.add("A13", A13.format(n=head.first, found=found), head.first)
