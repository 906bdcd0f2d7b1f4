"""Rule by rule: a minimal violating body gives exactly the provider's error; a valid one gives none."""

from __future__ import annotations

from typing import Any

import pytest

from sanitizer.validation import validate
from tests._support.builders import (
    CORRECTION,
    RECOVERY,
    aa,
    anthropic,
    au,
    ba,
    bedrock,
    btr,
    btu,
    bu,
    call,
    chat,
    fc,
    fr,
    gemini,
    gm,
    gtext,
    gu,
    message_of,
    oa,
    osys,
    ot,
    ou,
    responses,
    ri_call,
    ri_msg,
    ri_out,
    text,
    tr,
    tu,
)

A1 = (
    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
A2 = (
    "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
A5 = "messages.{n}: all messages must have non-empty content except for the optional final assistant message"
A13 = (
    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
    "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
O1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
D1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
G3 = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
B7 = (
    "A conversation must alternate between user and assistant roles. "
    "Make sure the conversation alternates between user and assistant roles and try again."
)

SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "q"}}
SERVER_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": []}
THINK = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
SYSTEM_PLACEMENT = (
    "messages.{n}: role 'system' must follow a 'user' message or an 'assistant' message ending in a server tool result"
)

Expected = list[tuple[str, str, int | None]]


def case(api: str, provider: str | None, body: Any, expected: Expected, name: str) -> Any:
    return pytest.param(api, provider, body, expected, id=name)


AN = "anthropic-messages"
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
OC = "openai-chat"
RS = "openai-responses"
GE = "gemini"
BR = "bedrock-converse"

CASES = [
    # Anthropic: valid shapes
    case(AN, None, anthropic(au("hi"), aa(tu("t1")), au(tr("t1"), text("thanks")), aa("done")), [], "an-valid"),
    case(AN, None, anthropic(au("hi"), aa(tu("t1")), au(tr("t1")), au("thanks")), [], "an-valid-merged-users"),
    case(AN, None, anthropic(au("hi"), aa(tu("a"), tu("b")), au(tr("a")), au(tr("b"))), [], "an-valid-split-results"),
    case(
        AN, None, anthropic(au("hi"), aa(SERVER_USE), aa(SERVER_RESULT, text("found")), au("x")), [], "an-valid-pause"
    ),
    case(AN, None, anthropic(au("hi"), aa(SERVER_USE)), [], "an-valid-final-server-use"),
    case(AN, None, anthropic(au("hi"), aa(SERVER_USE, tu("t1")), au(tr("t1"))), [], "an-valid-deferred-server"),
    case(AN, None, anthropic(au("hi"), aa([])), [], "an-valid-final-empty-assistant"),
    case(AN, None, anthropic(au("hi"), aa("prefill")), [], "an-valid-prefill"),
    case(
        AN,
        None,
        anthropic(au("hi"), aa(THINK, tu("t1")), au(tr("t1")), thinking={"type": "enabled", "budget_tokens": 1024}),
        [],
        "an-valid-thinking",
    ),
    # Anthropic: A1
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), tu("b")), au("next")),
        [("anthropic.A1", A1.format(n=1, ids="a, b"), 1)],
        "an-A1-two-ids",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), tu("b")), au(tr("a"), text("x"))),
        [("anthropic.A1", A1.format(n=1, ids="b"), 1)],
        "an-A1-partial",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(text("[Request interrupted]"), tr("a"))),
        [("anthropic.A1", A1.format(n=1, ids="a"), 1)],
        "an-A1-result-not-first",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au("hey"), au(tr("a"))),
        [("anthropic.A1", A1.format(n=1, ids="a"), 1)],
        "an-A1-merged-text-first",
    ),
    case(AN, None, anthropic(au("go"), aa(tu("a"))), [("anthropic.A1", A1.format(n=1, ids="a"), 1)], "an-A1-trailing"),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), text("let me check")), au(tr("a"))),
        [("anthropic.A1", A1.format(n=2, ids="a"), 2)],
        "an-A1-text-after-tool-use",
    ),
    # The recorded response (PEERS.md 11.3) names the message after the turn: messages.1 here.
    case(
        AN,
        None,
        anthropic(aa(tu("call_1"), text("I will check the weather.")), au(tr("call_1")), au("Use that result.")),
        [("anthropic.A1", A1.format(n=1, ids="call_1"), 1)],
        "an-A1-text-after-tool-use-recorded",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), text("let me check")), au("stop")),
        [("anthropic.A1", A1.format(n=1, ids="a"), 1)],
        "an-A1-text-after-unanswered-tool-use",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), SERVER_USE, SERVER_RESULT), au(tr("a"))),
        [("anthropic.A1", A1.format(n=2, ids="a"), 2)],
        "an-A1-server-tool-after-tool-use",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a"), {"type": "redacted_thinking", "data": "opaque"}), au(tr("a"))),
        [
            ("anthropic.A1", A1.format(n=2, ids="a"), 2),
            (
                "anthropic.thinking-first",
                "If an assistant message contains any thinking blocks, the first block must be thinking or "
                "redacted_thinking. Found tool_use.",
                1,
            ),
        ],
        "an-A1-redacted-thinking-after-tool-use",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(text("let me check")), aa(tu("a")), au(tr("a"))),
        [],
        "an-valid-text-then-tool-use",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), aa(RECOVERY), au(tr("a"))),
        [("anthropic.A1", A1.format(n=3, ids="a"), 3)],
        "an-A1-recovery-merged-into-call-turn",
    ),
    # Anthropic: A2
    case(
        AN,
        None,
        anthropic(au(tr("x")), aa("hi"), au("ok")),
        [("anthropic.A2", A2.format(n=0, m=0, id="x"), 0)],
        "an-A2-leading",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a"), tr("zz"))),
        [("anthropic.A2", A2.format(n=2, m=1, id="zz"), 2)],
        "an-A2-unknown",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(SERVER_RESULT, text("x")), au("y")),
        [
            (
                "anthropic.A2",
                "messages.1.content.0: unexpected `tool_use_id` found in `web_search_tool_result` blocks: "
                "srvtoolu_01. Each `web_search_tool_result` block must have a corresponding `server_tool_use` "
                "block before it.",
                1,
            )
        ],
        "an-A2-server",
    ),
    # Anthropic: A4
    case(
        AN,
        None,
        anthropic(au("go"), aa(SERVER_USE, text("found")), au("more")),
        [
            (
                "anthropic.A4",
                "messages.1: `web_search` tool use with id `srvtoolu_01` was found without a corresponding "
                "`web_search_tool_result` block",
                1,
            )
        ],
        "an-A4",
    ),
    # Anthropic: A5-A8
    case(AN, None, anthropic(au(""), aa("hi"), au("x")), [("anthropic.A5", A5.format(n=0), 0)], "an-A5-string"),
    case(AN, None, anthropic(au("a"), aa([]), au("x")), [("anthropic.A5", A5.format(n=1), 1)], "an-A5-list"),
    case(
        AN,
        None,
        anthropic(au(text("")), aa("hi"), au("x")),
        [("anthropic.A6", "messages: text content blocks must be non-empty", 0)],
        "an-A6",
    ),
    case(
        AN,
        None,
        anthropic(au(text("")), aa("hi"), au("x"), tools=False),
        [("anthropic.A6", "messages: text content blocks must be non-empty", 0)],
        "an-A6-no-tools",
    ),
    case(
        AN,
        None,
        anthropic(au(" \n"), aa("hi"), au("x")),
        [("anthropic.A7", "messages: text content blocks must contain non-whitespace text", 0)],
        "an-A7-string",
    ),
    case(
        AN,
        None,
        anthropic(au("a"), aa(text(" "), tu("t")), au(tr("t"))),
        [("anthropic.A7", "messages: text content blocks must contain non-whitespace text", 1)],
        "an-A7-block",
    ),
    case(AN, None, anthropic(au(text("\n"), text("what's up?")), aa("hi"), au("x")), [], "an-valid-A7-beside-text"),
    case(
        AN,
        None,
        anthropic(au("hi"), aa(text("Autumn"), text(" "))),
        [("anthropic.A7", "messages: text content blocks must contain non-whitespace text", 1)],
        "an-A7-beside-text-in-final-assistant",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), system=[text("Be brief."), text("\n \t\n")]),
        [("anthropic.A7-system", "system: text content blocks must contain non-whitespace text", None)],
        "an-A7-system-block",
    ),
    case(
        AN,
        "bedrock",
        anthropic(au("hi"), system=" "),
        [("anthropic.A7-system", "system: text content blocks must contain non-whitespace text", None)],
        "an-A7-system-string",
    ),
    case(
        AN,
        None,
        anthropic(au(text("")), system=""),
        [
            ("anthropic.A6-system", "system: text content blocks must be non-empty", None),
            ("anthropic.A6", "messages: text content blocks must be non-empty", 0),
        ],
        "an-A6-system-string-before-messages",
    ),
    case(AN, None, anthropic(au("hi"), system=[text("  Be brief.\n")]), [], "an-valid-system-with-spaces"),
    case(
        AN,
        "vertex",
        anthropic(au("hi"), aa({"type": "thinking", "thinking": "hm"}, text("Hello")), au("x")),
        [("anthropic.thinking-signature", "messages.1.content.0.thinking.signature: Field required", 1)],
        "an-thinking-signature-missing",
    ),
    case(
        AN,
        "bedrock",
        anthropic(au("hi"), aa({"type": "thinking", "thinking": "hm", "signature": ""}, text("Hello")), au("x")),
        [("anthropic.thinking-signature", "messages.1.content.0.thinking.signature: Field required", 1)],
        "an-thinking-signature-empty-bedrock",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), aa({"type": "thinking", "thinking": "hm", "signature": ""}, text("Hello")), au("x")),
        [("anthropic.A15", "messages.1.content.0: Invalid `signature` in `thinking` block", 1)],
        "an-A15-empty-signature",
    ),
    case(
        AN,
        "deepseek",
        anthropic(au("hi"), aa({"type": "thinking", "thinking": "hm"}, text("Hello")), au("x")),
        [],
        "ds-valid-unsigned-thinking",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), aa("prefill ")),
        [("anthropic.A8", "messages: final assistant content cannot end with trailing whitespace", 1)],
        "an-A8",
    ),
    case(
        AN,
        None,
        anthropic({"role": "system", "content": "be nice"}, au("hi")),
        [("anthropic.A10-system", "role 'system' is not supported on this model", 0)],
        "an-A10-system",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), {"role": "system", "content": "be nice"}, aa("Hello"), au("more"), model="claude-opus-4-7"),
        [("anthropic.A10-system", "role 'system' is not supported on this model", 1)],
        "an-A10-system-opus-4-7",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), {"role": "system", "content": "be nice"}, aa("Hello"), au("more"), model="claude-opus-4-8"),
        [],
        "an-valid-system-after-user-opus-4-8",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), {"role": "system", "content": "be nice"}, model="claude-opus-5"),
        [],
        "an-valid-system-last-opus-5",
    ),
    case(
        AN,
        None,
        anthropic(
            au("hi"), aa(SERVER_USE, SERVER_RESULT), {"role": "system", "content": "be nice"}, model="claude-opus-4-8"
        ),
        [],
        "an-valid-system-after-server-tool-opus-4-8",
    ),
    case(
        AN,
        None,
        anthropic(
            au("hi"),
            {"role": "system", "content": "a"},
            {"role": "system", "content": "b"},
            aa("Hi"),
            au("more"),
            model="claude-opus-4-8",
        ),
        [],
        "an-valid-system-run-opus-4-8",
    ),
    case(
        AN,
        None,
        anthropic({"role": "system", "content": "be nice"}, au("hi"), model="claude-opus-4-8"),
        [("anthropic.system-placement", SYSTEM_PLACEMENT.format(n=0), 0)],
        "an-system-placement-first",
    ),
    case(
        AN,
        None,
        anthropic(
            au("ls?"),
            aa(tu("toolu_1")),
            {"role": "system", "content": "be nice"},
            au(tr("toolu_1")),
            model="claude-opus-4-8",
        ),
        [("anthropic.system-placement", SYSTEM_PLACEMENT.format(n=2), 2)],
        "an-system-placement-between-call-and-result",
    ),
    case(
        AN,
        None,
        anthropic(
            au("hi"),
            {"role": "system", "content": "a"},
            {"role": "system", "content": "b"},
            au("more"),
            model="claude-opus-4-8",
        ),
        [("anthropic.system-placement", SYSTEM_PLACEMENT.format(n=1), 1)],
        "an-system-placement-before-user",
    ),
    case(
        AN,
        "bedrock",
        anthropic(au("hi"), {"role": "system", "content": "be nice"}, aa("Hello"), au("more"), model="claude-opus-4-8"),
        [("anthropic.A10-system", "role 'system' is not supported on this model", 1)],
        "an-A10-system-bedrock-opus-4-8",
    ),
    case(
        AN,
        "bedrock",
        anthropic(aa("How can I help?"), au("hi")),
        [("anthropic.A10", 'messages: first message must use the "user" role', 0)],
        "an-A10-bedrock",
    ),
    case(AN, None, anthropic(aa("How can I help?"), au("hi")), [], "an-valid-assistant-first"),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a")), aa(text("again"), tu("a")), au(tr("a"))),
        [("anthropic.A11", "messages.3.content.1: `tool_use` ids must be unique", 3)],
        "an-A11",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("functions.bash:0")), au(tr("functions.bash:0"))),
        [
            ("anthropic.A12", "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", 1),
            (
                "anthropic.A12",
                "messages.2.content.0.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'",
                2,
            ),
        ],
        "an-A12",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("")), au(tr("t"))),
        [
            ("anthropic.A12", "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", 1),
            ("anthropic.A1", A1.format(n=1, ids=""), 1),
            ("anthropic.A2", A2.format(n=2, m=0, id="t"), 2),
        ],
        "an-A12-empty-id",
    ),
    case(
        AN,
        None,
        anthropic(
            au("go"),
            aa(
                {**SERVER_USE, "id": "ws_0c1f"},
                {**SERVER_RESULT, "tool_use_id": "ws_0c1f"},
                text("found"),
            ),
            au("x"),
        ),
        [
            (
                "anthropic.A12",
                "messages.1.content.0.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
                1,
            ),
            (
                "anthropic.A12",
                "messages.1.content.1.web_search_tool_result.tool_use_id: "
                "String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'",
                1,
            ),
        ],
        "an-A12-server-tool-use",
    ),
    case(
        AN,
        None,
        anthropic(
            au("go"),
            aa(
                {"type": "mcp_tool_use", "id": "mcptoolu_01", "name": "lookup", "server_name": "docs", "input": {}},
                {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "content": [text("found")]},
                text("done"),
            ),
            au("x"),
        ),
        [],
        "an-valid-mcp-pair",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a")), thinking={"type": "enabled", "budget_tokens": 1024}),
        [("anthropic.A13", A13, 1)],
        "an-A13",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), aa("prefill"), model="claude-opus-4-6"),
        [
            (
                "anthropic.A17",
                "This model does not support assistant message prefill. The conversation must end with a user message.",
                1,
            )
        ],
        "an-A17",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), aa("prefill"), model="claude-fable-5"),
        [
            (
                "anthropic.A17",
                "This model does not support assistant message prefill. The conversation must end with a user message.",
                1,
            )
        ],
        "an-A17-fable-5",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a", tool_input="ls -l")), au(tr("a"))),
        [("anthropic.A18", "messages.1.content.0.tool_use.input: Input should be a valid dictionary", 1)],
        "an-A18",
    ),
    case(
        AN,
        None,
        anthropic(au("hi"), tools=False) | {"tools": [{"name": "ls"}, {"name": "ls"}]},
        [("anthropic.A19", "tools: Tool names must be unique.", None)],
        "an-A19",
    ),
    case(AN, None, anthropic(), [("anthropic.A20", "messages: at least one message is required", None)], "an-A20"),
    case(
        AN,
        None,
        anthropic(
            au(
                {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": PNG_1X1}},
                {"type": "text", "text": "look"},
            )
        ),
        [
            (
                "anthropic.A21",
                "messages.0.content.0.image.source.base64: The image was specified using the image/gif media type, "
                "but the image appears to be a image/png image",
                0,
            )
        ],
        "an-A21",
    ),
    # Bytes of no type Anthropic takes are not this check's to name.
    case(
        AN,
        None,
        anthropic(
            au(
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAAAAAAAAAAAAAA"}},
                {"type": "text", "text": "x"},
            )
        ),
        [],
        "an-valid-unknown-image-bytes",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a")), tools=False),
        [
            (
                "anthropic.tools-required",
                "Requests which include `tool_use` or `tool_result` blocks must define tools.",
                1,
            )
        ],
        "an-tools-required",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a"), tr("a"))),
        [
            (
                "anthropic.duplicate-result",
                "each tool_use must have a single result. Found multiple tool_result blocks with id: a",
                2,
            )
        ],
        "an-duplicate-result",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("bad id")), au(text(""), tr("bad id"))),
        [
            ("anthropic.A12", "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", 1),
            (
                "anthropic.A12",
                "messages.2.content.1.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'",
                2,
            ),
            ("anthropic.A6", "messages: text content blocks must be non-empty", 2),
            ("anthropic.A1", A1.format(n=1, ids="bad id"), 1),
        ],
        "an-order-schema-text-pairing",
    ),
    # OpenAI Chat
    case(OC, None, chat(osys(), ou(), oa(None, "c1", "c2"), ot("c2"), ot("c1"), ou("thanks")), [], "oc-valid"),
    case(
        OC,
        None,
        chat(ou(), oa(None, "c1", "c2"), ot("c1"), ou("next")),
        [("openai.O1", O1.format(ids="c2"), 1)],
        "oc-O1-partial",
    ),
    case(OC, None, chat(ou(), oa("", "c1", "c2")), [("openai.O1", O1.format(ids="c1, c2"), 1)], "oc-O1-trailing"),
    case(OC, None, chat(ou(), oa("hi"), ot("c9")), [("openai.O2", O2, 2)], "oc-O2"),
    case(
        OC,
        "azure",
        chat(ou(), oa("hi"), ot("c9")),
        [("openai.O2", O2, 2)],
        "azure-O2",
    ),
    case(
        OC,
        None,
        chat(ou(), oa(None, "c1"), ot("c1"), ot("c2")),
        [("openai.O3", "Invalid parameter: 'tool_call_id' of 'c2' not found in 'tool_calls' of previous message.", 3)],
        "oc-O3",
    ),
    case(
        OC,
        None,
        chat(ou(), oa(None, "c1", "c2"), ot("c1"), ot("c1"), ot("c2")),
        [
            (
                "openai.O4",
                "Invalid parameter: Duplicate value for 'tool_call_id' of 'c1', in messages[2] and messages[3].",
                3,
            )
        ],
        "oc-O4",
    ),
    case(
        OC,
        None,
        chat(),
        [
            (
                "openai.O5",
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                None,
            )
        ],
        "oc-O5-messages",
    ),
    case(
        OC,
        None,
        chat(ou(), oa("hi", tool_calls=[]), ou()),
        [
            (
                "openai.O5",
                "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                1,
            )
        ],
        "oc-O5-tool-calls",
    ),
    case(
        OC,
        None,
        chat(
            ou(),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "", "arguments": "{}"}}],
            },
            ot("c1"),
        ),
        [
            (
                "openai.O5",
                "Invalid 'messages[1].tool_calls[0].function.name': empty string. Expected a string with minimum length 1, but got an empty string instead.",
                1,
            )
        ],
        "oc-O5-name",
    ),
    case(
        OC,
        None,
        chat(ou(), oa(None), ou()),
        [("openai.O6", "Invalid value for 'content': expected a string, got null.", 1)],
        "oc-O6-assistant",
    ),
    case(
        OC,
        None,
        chat(ou(None)),
        [("openai.O6", "Invalid value for 'content': expected a string, got null.", 0)],
        "oc-O6-user",
    ),
    case(
        OC,
        None,
        chat(ou([{"text": "hi"}])),
        [("openai.O6", "Missing required parameter: 'messages[0].content[0].type'.", 0)],
        "oc-O6-part",
    ),
    case(
        OC,
        "azure",
        chat(ou(), oa(None, "c" * 41), ot("c" * 41)),
        [
            (
                "openai.O10",
                "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, "
                "but got a string with length 41 instead.",
                1,
            )
        ],
        "az-O10",
    ),
    case(OC, None, chat(ou(), oa(None, "c" * 40), ot("c" * 40)), [], "oc-valid-id-of-40"),
    # Groq's ids are not known to be capped.
    case(OC, "groq", chat(ou(), oa(None, "c" * 41), ot("c" * 41)), [], "gq-valid-long-id"),
    case(
        OC,
        None,
        chat(ou(), {"role": "assistant", "content": None, "function_call": {"name": "ls"}}),
        [("openai.O11", "Missing required parameter: 'messages[1].function_call.arguments'.", 1)],
        "oc-O11",
    ),
    case(
        OC,
        None,
        chat(ou(), {"role": "assistant", "content": None, "function_call": {"name": "ls", "arguments": "{}"}}),
        [],
        "oc-valid-function-call",
    ),
    case(
        OC,
        None,
        chat(
            ou(),
            {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments={"city": "Oslo"})]},  # type: ignore[arg-type]
            ot("c1"),
        ),
        [
            (
                "openai.O13",
                "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, "
                "but got an object instead.",
                1,
            )
        ],
        "oc-O13",
    ),
    case(
        OC,
        "azure",
        chat(
            ou(),
            {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments=["Oslo"])]},  # type: ignore[arg-type]
            ot("c1"),
        ),
        [
            (
                "openai.O13",
                "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, "
                "but got an array instead.",
                1,
            )
        ],
        "az-O13-array",
    ),
    # Mistral takes arguments as an object (its own SDK sends them so): not O13's to report.
    case(
        OC,
        "mistral",
        chat(
            ou(),
            {"role": "assistant", "content": None, "tool_calls": [call("abcDEF123", arguments={"city": "Oslo"})]},  # type: ignore[arg-type]
            ot("abcDEF123"),
        ),
        [],
        "mi-object-arguments",
    ),
    case(
        OC,
        None,
        chat(ou(), {"role": "function", "content": "found"}),
        [("openai.O12", "Missing parameter 'name': messages with role 'function' must have a 'name'.", 1)],
        "oc-O12",
    ),
    # A name outside OpenAI's pattern: a participant's (FlowiseAI/Flowise#2948), a replayed call's
    # (mcp-use/mcp-use#90); an empty call name is O5's, a valid one nobody's.
    case(
        OC,
        None,
        chat(osys(), {"role": "user", "name": "Paulo Seze", "content": "hi"}),
        [
            (
                "openai.O14",
                "Invalid 'messages[1].name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                1,
            )
        ],
        "oc-O14-message-name",
    ),
    case(
        OC,
        "azure",
        chat(ou(), {"role": "assistant", "content": None, "tool_calls": [call("c1", name="files.read")]}, ot("c1")),
        [
            (
                "openai.O14",
                "Invalid 'messages[1].tool_calls[0].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                1,
            )
        ],
        "az-O14-call-name",
    ),
    case(
        OC,
        None,
        chat({"role": "user", "name": "paulo_seze-2", "content": "hi"}, oa(None, "c1"), ot("c1")),
        [],
        "oc-O14-valid-names",
    ),
    # A tool definition's name: the pattern (Vortiago/mcp-azure-devops PR#30), 64 characters
    # (use-novamira/novamira#12); reported, not repaired.
    case(
        OC,
        None,
        {
            "model": "gpt-4o",
            "messages": [ou()],
            "tools": [
                {"type": "function", "function": {"name": "ok_tool", "parameters": {}}},
                {"type": "function", "function": {"name": "azure devops: create file", "parameters": {}}},
            ],
        },
        [
            (
                "openai.O15",
                "Invalid 'tools[1].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                None,
            )
        ],
        "oc-O15-tool-name-pattern",
    ),
    case(
        OC,
        "azure",
        {
            "model": "gpt-4o",
            "messages": [ou()],
            "tools": [{"type": "function", "function": {"name": "mcp__novamira__" + "x" * 52, "parameters": {}}}],
        },
        [
            (
                "openai.O15",
                "Invalid 'tools[0].function.name': string too long. "
                "Expected a string with maximum length 64, but got a string with length 67 instead.",
                None,
            )
        ],
        "az-O15-tool-name-length",
    ),
    # MiniMax
    case(
        OC,
        "minimax",
        chat(ou(), {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments='"{}"')]}, ot("c1")),
        [
            (
                "minimax.arguments-not-object",
                "invalid params, invalid function arguments json string, tool_call_id: c1 (2013)",
                1,
            )
        ],
        "mm-arguments-double-encoded",
    ),
    case(
        OC,
        "minimax",
        chat(ou(), {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments="")]}, ot("c1")),
        [],
        "mm-valid-empty-arguments",
    ),
    # DeepSeek
    case(
        OC,
        "deepseek",
        # serde stops at the comma after messages[1]: byte 154 of the compact body.
        {"model": "deepseek-chat", "messages": [ou([text("hi")]), oa([text("ok")]), ou()]},
        [
            (
                "deepseek.content-not-string",
                "Failed to deserialize the JSON body into the target type: messages[1]: invalid type: sequence, "
                "expected a string at line 1 column 154",
                1,
            )
        ],
        "ds-content-not-string",
    ),
    case(OC, "deepseek", chat(ou(), oa(None, "c1"), ou("next")), [("deepseek.D1", D1, 1)], "ds-D1"),
    case(OC, "deepseek", chat(ou(), oa(None, "c1"), ot("c1"), ot("c2")), [("deepseek.D1", D1, 1)], "ds-D1-unknown-id"),
    case(
        OC,
        "deepseek",
        chat(ou(), ot("c9")),
        [("deepseek.D2", "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'", 1)],
        "ds-D2",
    ),
    case(
        OC,
        "deepseek",
        chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek-chat", thinking={"type": "enabled"}),
        [("deepseek.D3", "The `reasoning_content` in the thinking mode must be passed back to the API.", 1)],
        "ds-D3",
    ),
    case(
        OC,
        "deepseek",
        chat(ou(), oa(None, "c1"), ot("c1"), model="deepseek-reasoner"),
        [
            (
                "deepseek.D3",
                "Missing `reasoning_content` field in the assistant message at message index 1. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                1,
            )
        ],
        "ds-D3-reasoner",
    ),
    case(
        OC,
        "deepseek",
        chat(ou(), oa(None, "c1", reasoning_content="r"), ot("c1"), model="deepseek-reasoner"),
        [],
        "ds-valid-reasoner-tool",
    ),
    case(
        OC,
        "deepseek",
        chat(ou(), oa("a"), ou("b"), ou("c"), model="deepseek-reasoner"),
        [
            (
                "deepseek.D4",
                "deepseek-reasoner does not support successive user or assistant messages (messages[2] and messages[3] in your input). You should interleave the user/assistant messages in the message sequence.",
                2,
            )
        ],
        "ds-D4",
    ),
    case(
        OC,
        "deepseek",
        chat(ou(), oa("a"), model="deepseek-reasoner"),
        [
            (
                "deepseek.D5",
                "The last message of deepseek-reasoner must be a user message, or an assistant message with prefix mode on (refer to https://api-docs.deepseek.com/guides/chat_prefix_completion).",
                1,
            )
        ],
        "ds-D5",
    ),
    case(OC, "deepseek", chat(ou(), oa("a", prefix=True), model="deepseek-reasoner"), [], "ds-valid-prefix"),
    # Mistral
    case(OC, "mistral", chat(ou(), oa(None, "abcDEF123"), ot("abcDEF123"), oa("done"), ou("x")), [], "mi-valid"),
    case(
        OC,
        "mistral",
        chat(ou(), oa(None, "call_1"), ot("call_1"), oa("ok"), ou()),
        [
            ("mistral.M1", "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.", 1),
            ("mistral.M1", "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.", 2),
        ],
        "mi-M1",
    ),
    case(
        OC,
        "mistral",
        chat(ou(), oa(None, "abcDEF123", "abcDEF124"), ot("abcDEF123"), oa("x"), ou()),
        [("mistral.M2", "Not the same number of function calls and responses", 1)],
        "mi-M2",
    ),
    case(
        OC,
        "mistral",
        chat(ou(), oa(None, "abcDEF123"), ot("abcDEF123"), ou("x")),
        [("mistral.M3", "Unexpected role 'user' after role 'tool'", 3)],
        "mi-M3-user-after-tool",
    ),
    case(
        OC,
        "mistral",
        chat(ou(), ot("abcDEF123")),
        [("mistral.M3", "Unexpected role 'tool' after role 'user'", 1)],
        "mi-M3-tool-after-user",
    ),
    case(
        OC,
        "mistral",
        chat(ou(), oa("x")),
        [
            (
                "mistral.M4",
                "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant",
                1,
            )
        ],
        "mi-M4",
    ),
    case(OC, "mistral", chat(ou(), oa("x", prefix=True)), [], "mi-valid-prefix"),
    # Other compatible providers
    case(
        OC,
        "groq",
        chat(ou(), oa(None, "c1"), ot("c1", [{"type": "text", "text": "ok"}])),
        [
            (
                "groq.X5",
                "'messages.2' : for 'role:tool' the following must be satisfied[('messages.2.content' : value must be a string)]",
                2,
            )
        ],
        "groq-X5",
    ),
    case(
        OC,
        "moonshot",
        chat(ou(), oa(None, "c1"), ot("c1"), model="kimi-k2-thinking"),
        [
            (
                "moonshot.X4",
                "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
                1,
            )
        ],
        "moonshot-X4",
    ),
    case(
        OC,
        "minimax",
        chat(ou(), oa(None, "c1"), ou()),
        [("minimax.X3", "invalid params, tool call result does not follow tool call (2013)", 1)],
        "minimax-X3",
    ),
    case(OC, "openrouter", chat(ou(), oa("hi"), ot("c9")), [("openai.O2", O2, 2)], "openrouter-O2"),
    case(OC, "vllm", chat(ou(), oa(None, "c1"), ou()), [], "vllm-no-pairing"),
    case(
        OC,
        "vllm",
        chat(osys(), ou(), ou(), model="mistralai/Mistral-7B-Instruct-v0.3"),
        [
            (
                "vllm.V1",
                "After the optional system message, conversation roles must alternate user/assistant/user/assistant/...",
                2,
            )
        ],
        "vllm-V1-mistral",
    ),
    case(
        OC,
        "vllm",
        chat(osys(), ou(), oa(None, "c1"), ot("c1"), oa("done"), ou(), model="mistralai/Mistral-7B-Instruct-v0.3"),
        [],
        "vllm-valid-mistral-tools",
    ),
    case(
        OC,
        "vllm",
        chat(oa("hi"), ou(), model="google/gemma-2-9b-it"),
        [
            ("vllm.V1", "Conversation roles must alternate user/assistant/user/assistant/...", 0),
            ("vllm.V1", "Conversation roles must alternate user/assistant/user/assistant/...", 1),
        ],
        "vllm-V1-gemma",
    ),
    case(
        OC,
        "anthropic-openai-compat",
        chat(osys(), ou(""), oa("x"), ou()),
        [("anthropic.A5", A5.format(n=0), 1)],
        "aoc-A5",
    ),
    case(
        OC,
        "anthropic-openai-compat",
        chat(osys(), ou(), oa(None, "c1"), ou("x")),
        [("anthropic.A1", A1.format(n=1, ids="c1"), 2)],
        "aoc-A1",
    ),
    case(
        OC,
        "anthropic-openai-compat",
        chat(osys(), ou(), oa(None, "c1", "c2"), ot("c1"), ot("c2"), ou("x")),
        [],
        "aoc-valid",
    ),
    case(
        OC,
        "gemini-openai-compat",
        chat(ou("")),
        [
            (
                "gemini.G5",
                "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
                0,
            )
        ],
        "goc-G5",
    ),
    case(
        OC,
        "gemini-openai-compat",
        chat(osys(), ou(), oa(None, "c1", "c2"), ot("c1", name="ls"), ot("c2", name="ls"), ou("x")),
        [],
        "goc-valid",
    ),
    case(
        OC,
        "gemini-openai-compat",
        chat(osys(), ou(), oa(None, "c1", "c2"), ot("c1", name="ls"), ou("x")),
        [("gemini.G3", G3, 2)],
        "goc-G3",
    ),
    case(
        OC,
        "gemini-openai-compat",
        chat(ou(), oa(None, "c1", "c2"), ot("c1"), ot("c2", name="ls"), ou("x")),
        [("gemini.compat-result-without-name", "Request contains an invalid argument.", 2)],
        "goc-result-without-name",
    ),
    # Responses
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1"), ri_out("c1"), ri_msg("assistant", "done")),
        [],
        "rs-valid",
    ),
    case(RS, None, {"model": "gpt-5", "input": "hi"}, [], "rs-valid-string"),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "tool_search_call", "id": "tsc_1", "execution": "server", "arguments": '{"query":"x"}'},
            ri_msg("user", "x"),
        ),
        [("responses.R13", "Invalid type for 'input[1].arguments': expected an object, but got a string instead.", 1)],
        "rs-R13",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1", name=""), ri_out("c1")),
        [
            (
                "responses.R14",
                "Invalid 'input[1].name': empty string. Expected a string with minimum length 1, "
                "but got an empty string instead.",
                1,
            )
        ],
        "rs-R14",
    ),
    # A function call's arguments are text by definition; a tool search call's object is its own.
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "tool_search_call", "id": "tsc_1", "execution": "server", "arguments": {"query": "x"}},
            ri_call("c1"),
            ri_out("c1"),
        ),
        [],
        "rs-valid-tool-search-object",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1"), ri_msg("user", "x")),
        [("responses.R1", "No tool output found for function call c1.", 1)],
        "rs-R1",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), {"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "x"}),
        [("responses.R1", "No tool output found for custom tool call c1.", 1)],
        "rs-R1-custom",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_out("c9")),
        [("responses.R2", "No tool call found for function call output with call_id c9.", 1)],
        "rs-R2",
    ),
    case(RS, None, responses(ri_out("c9"), previous_response_id="resp_1"), [], "rs-R2-chained"),
    case(
        RS,
        None,
        responses(ri_out("c1"), ri_call("c1")),
        [
            ("responses.R2", "No tool call found for function call output with call_id c1.", 0),
            ("responses.R1", "No tool output found for function call c1.", 1),
        ],
        "rs-R2-output-before-call",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), {"type": "reasoning", "id": "rs_1", "summary": []}, ri_msg("user", "x")),
        [("responses.R3", "Item 'rs_1' of type 'reasoning' was provided without its required following item.", 1)],
        "rs-R3",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "reasoning", "id": "rs_1", "summary": []},
            ri_call("c1", id="fc_1"),
            ri_out("c1"),
        ),
        [],
        "rs-valid-reasoning",
    ),
    case(
        RS,
        None,
        # A model without reasoning, so the fc_ ids need no reasoning item (R4).
        responses(ri_call("c1", id="fc_1"), ri_out("c1"), ri_call("c2", id="fc_1"), ri_out("c2"), model="gpt-4.1"),
        [
            (
                "responses.R6",
                "Duplicate item found with id fc_1. Remove duplicate items from your input and try again.",
                2,
            )
        ],
        "rs-R6",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), {"type": "reasoning", "id": "rs_1", "summary": []}, ri_msg("assistant", "a")),
        [("responses.R3", "Item 'rs_1' of type 'reasoning' was provided without its required following item.", 1)],
        "rs-R3-stored-reasoning-before-item-without-id",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            ri_msg("assistant", "a"),
        ),
        [],
        "rs-valid-encrypted-reasoning-before-item-without-id",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1", id="fc_1"), ri_out("c1"), ri_msg("user", "next")),
        [
            (
                "responses.R4",
                "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_…'.",
                1,
            )
        ],
        "rs-R4",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1", id="fc_1"), ri_out("c1"), model="gpt-4.1"),
        [],
        "rs-valid-fc-id-without-reasoning-model",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "reasoning", "id": "rs_1", "summary": []},
            ri_call("c1", id="fc_1"),
            ri_out("c1"),
            ri_call("c2", id="fc_2"),
            ri_out("c2"),
        ),
        [],
        "rs-valid-reasoning-earlier-in-the-turn",
    ),
    case(
        RS,
        None,
        responses(ri_call("c1", id="fc_1"), ri_out("c1"), previous_response_id="resp_1"),
        [],
        "rs-R4-chained-not-checked",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1"), ri_out("c1", id="c1")),
        [("responses.R1", "No tool output found for function call c1.", 1)],
        "rs-R1-output-with-foreign-id",
    ),
    case(
        RS,
        None,
        responses(ri_out("call_1", id="call_1"), previous_response_id="resp_1"),
        [("responses.R1", "No tool output found for function call call_1.", 0)],
        "rs-R1-chained-output-with-foreign-id",
    ),
    case(
        RS,
        None,
        responses(ri_msg("user", "hi"), ri_call("c1"), ri_out("c1", id="fco_1")),
        [],
        "rs-valid-output-item-id",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "item_reference", "id": "msg_1"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            ri_call("c1", id="fc_1"),
            ri_out("c1"),
            store=False,
        ),
        [
            (
                "responses.R5",
                "Item with id 'msg_1' not found. Items are not persisted when `store` is set to false. "
                "Try again with `store` set to true, or remove this item from your input.",
                1,
            ),
            (
                "responses.R5",
                "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. "
                "Try again with `store` set to true, or remove this item from your input.",
                2,
            ),
        ],
        "rs-R5",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "hi"),
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            ri_call("c1"),
            ri_out("c1"),
            store=False,
        ),
        [],
        "rs-valid-store-false-encrypted-reasoning",
    ),
    case(
        RS,
        None,
        responses(ri_call(""), ri_out("")),
        [
            (
                "responses.R7",
                "Invalid 'input[0].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
                0,
            ),
            (
                "responses.R7",
                "Invalid 'input[1].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead.",
                1,
            ),
        ],
        "rs-R7",
    ),
    # Gemini
    case(
        GE,
        None,
        gemini(gu(gtext("hi")), gm(fc(), fc()), gu(fr(), fr()), gm(gtext("done")), gu(gtext("x"))),
        [],
        "ge-valid",
    ),
    case(
        GE,
        None,
        gemini(gm(fc()), gu(fr()), gm(gtext("ok")), gu(gtext("x"))),
        [
            (
                "gemini.G1",
                "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
                0,
            )
        ],
        "ge-G1",
    ),
    case(
        GE,
        None,
        gemini(gu(gtext("hi")), gm(gtext("ok")), gu(fr())),
        [("gemini.G2", "Please ensure that function response turn comes immediately after a function call turn.", 2)],
        "ge-G2",
    ),
    case(GE, None, gemini(gu(gtext("hi")), gm(fc(), fc()), gu(fr())), [("gemini.G3", G3, 1)], "ge-G3"),
    case(
        GE,
        None,
        gemini(gu(gtext("hi")), gm(), gu(gtext("x"))),
        [("gemini.G5", "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.\n", 1)],
        "ge-G5",
    ),
    case(
        GE,
        None,
        {"systemInstruction": {"parts": [gtext("hi")]}},
        [("gemini.G6", "* GenerateContentRequest.contents: contents is not specified\n", None)],
        "ge-G6",
    ),
    case(
        GE,
        None,
        gemini(gu(gtext("hi")), gm(gtext("ok"))),
        [("gemini.G7", "Requests ending with a model turn are not supported.", 1)],
        "ge-G7",
    ),
    # Bedrock Converse
    case(
        BR,
        None,
        bedrock(
            bu({"text": "hi"}),
            ba({"text": "let me"}, btu("t1")),
            bu(btr("t1")),
            ba({"text": "done"}),
            bu({"text": "x"}),
        ),
        [],
        "br-valid",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("a"), btu("b")), bu(btr("a"))),
        [("bedrock.B1", "Expected toolResult blocks at messages.2.content for the following Ids: b", 2)],
        "br-B1",
    ),
    case(
        BR,
        None,
        bedrock(bu(btr("x")), ba({"text": "hi"}), bu({"text": "x"})),
        [
            (
                "bedrock.B2",
                "The number of toolResult blocks at messages.0.content exceeds the number of toolUse blocks of previous turn.",
                0,
            )
        ],
        "br-B2",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("a")), bu(btr("a"), {"text": "thanks"})),
        [
            (
                "bedrock.B3",
                "messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
                2,
            )
        ],
        "br-B3",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("a")), bu(btr("a")), tools=False),
        [("bedrock.B4", "The toolConfig field must be defined when using toolUse and toolResult content blocks.", 1)],
        "br-B4",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": " "}), ba({"text": "x"}), bu({"text": "y"})),
        [
            (
                "bedrock.B5",
                "The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and try again.",
                0,
            )
        ],
        "br-B5",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(), bu({"text": "y"})),
        [
            (
                "bedrock.B6",
                "The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again.",
                1,
            )
        ],
        "br-B6",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("a")), bu(btr("a", content=[], status="error"))),
        [
            (
                "bedrock.B6",
                "The content field at messages.2.content.0.toolResult cannot be empty when status value is error.",
                2,
            )
        ],
        "br-B6-error-result",
    ),
    case(BR, None, bedrock(bu({"text": "a"}), bu({"text": "b"})), [("bedrock.B7", B7, 1)], "br-B7"),
    case(
        BR,
        None,
        bedrock(ba({"text": "a"}), bu({"text": "b"})),
        [
            (
                "bedrock.B8",
                "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
                0,
            )
        ],
        "br-B8",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("functions.ls:0")), bu(btr("functions.ls:0"))),
        [
            (
                "bedrock.B9",
                "1 validation error detected: Value 'functions.ls:0' at 'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
                1,
            ),
            (
                "bedrock.B9",
                "1 validation error detected: Value 'functions.ls:0' at 'messages.3.member.content.1.member.toolResult.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+",
                2,
            ),
        ],
        "br-B9",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "go"}), ba(btu("x" * 65)), bu(btr("x" * 65))),
        [
            (
                "bedrock.B9",
                f"1 validation error detected: Value '{'x' * 65}' at 'messages.2.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: Member must have length less than or equal to 64",
                1,
            ),
            (
                "bedrock.B9",
                f"1 validation error detected: Value '{'x' * 65}' at 'messages.3.member.content.1.member.toolResult.toolUseId' failed to satisfy constraint: Member must have length less than or equal to 64",
                2,
            ),
        ],
        "br-B9-length",
    ),
]

CASES += [
    case(
        AN,
        None,
        anthropic(au("go"), aa(tu("a")), au(tr("a", [text("")])), aa("x"), au("y")),
        [("anthropic.A6", "messages: text content blocks must be non-empty", 2)],
        "an-A6-nested-in-tool-result",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(text("hi"), THINK), au("x"), thinking={"type": "enabled", "budget_tokens": 1024}),
        [
            (
                "anthropic.thinking-first",
                "If an assistant message contains any thinking blocks, the first block must be thinking or "
                "redacted_thinking. Found text.",
                1,
            )
        ],
        "an-thinking-first",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(THINK), thinking={"type": "enabled", "budget_tokens": 1024}),
        [("anthropic.thinking-final", "The final block in an assistant message cannot be `thinking`.", 1)],
        "an-thinking-final-block",
    ),
    case(
        AN,
        None,
        anthropic(au("go"), aa(THINK, text("partial"))),
        [
            (
                "anthropic.thinking-final",
                "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`.",
                1,
            )
        ],
        "an-thinking-final-disabled",
    ),
    case(AN, None, anthropic(au("go"), aa(THINK, text("hi")), au("x")), [], "an-valid-old-thinking-disabled"),
    case(
        OC,
        "mistral",
        chat(ou(), ot("abcDEF123"), ot("abcDEF124"), oa("x"), ou()),
        [("mistral.M3", "Unexpected role 'tool' after role 'user'", 1)],
        "mi-M3-tool-run-after-user",
    ),
    case(
        OC,
        "gemini-openai-compat",
        chat(ou([{"type": "image_url", "image_url": {"url": "data:,"}}])),
        [],
        "goc-valid-image-only",
    ),
]


@pytest.mark.parametrize(("api", "provider", "body", "expected"), CASES)
def test_rule(api: str, provider: str | None, body: Any, expected: Expected) -> None:
    violations = validate(body, api=api, provider=provider)
    assert [(v.rule, v.message, v.message_index) for v in violations] == expected
    for v in violations:
        # OpenAI answers an item its store does not hold (R5) with a 404.
        assert v.status == (404 if v.rule == "responses.R5" else 400)
        assert message_of(v.body) == v.message


# The seed: an interrupted tool call, the agent's recovery message, then the user's correction.
SEEDS = [
    case(
        AN,
        None,
        anthropic(au("list files"), aa(tu("toolu_01")), aa(RECOVERY), au(CORRECTION)),
        [("anthropic.A1", A1.format(n=1, ids="toolu_01"), 1)],
        "anthropic",
    ),
    case(
        OC,
        None,
        chat(ou("list files"), oa(None, "call_1"), oa(RECOVERY), ou(CORRECTION)),
        [("openai.O1", O1.format(ids="call_1"), 1)],
        "openai-chat",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "list files"), ri_call("call_1"), ri_msg("assistant", RECOVERY), ri_msg("user", CORRECTION)
        ),
        [("responses.R1", "No tool output found for function call call_1.", 1)],
        "openai-responses",
    ),
    case(
        GE,
        None,
        gemini(gu(gtext("list files")), gm(fc()), gm(gtext(RECOVERY)), gu(gtext(CORRECTION))),
        [("gemini.G3", G3, 1)],
        "gemini",
    ),
    case(
        BR,
        None,
        bedrock(bu({"text": "list files"}), ba(btu("tooluse_1")), ba({"text": RECOVERY}), bu({"text": CORRECTION})),
        [
            ("bedrock.B7", B7, 2),
            ("bedrock.B1", "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_1", 2),
        ],
        "bedrock-converse",
    ),
    case(
        OC,
        "mistral",
        chat(ou("list files"), oa(None, "abcDEF123"), oa(RECOVERY), ou(CORRECTION)),
        [("mistral.M2", "Not the same number of function calls and responses", 1)],
        "mistral",
    ),
    case(
        OC,
        "deepseek",
        chat(ou("list files"), oa(None, "call_1"), oa(RECOVERY), ou(CORRECTION)),
        [("deepseek.D1", D1, 1)],
        "deepseek",
    ),
]

REPAIRED = [
    case(
        AN,
        None,
        anthropic(
            au("list files"),
            aa(tu("toolu_01")),
            au(tr("toolu_01", "interrupted", is_error=True)),
            aa(RECOVERY),
            au(CORRECTION),
        ),
        [],
        "anthropic",
    ),
    case(
        OC,
        None,
        chat(ou("list files"), oa(None, "call_1"), ot("call_1", "interrupted"), oa(RECOVERY), ou(CORRECTION)),
        [],
        "openai-chat",
    ),
    case(
        RS,
        None,
        responses(
            ri_msg("user", "list files"),
            ri_call("call_1"),
            ri_out("call_1"),
            ri_msg("assistant", RECOVERY),
            ri_msg("user", CORRECTION),
        ),
        [],
        "openai-responses",
    ),
    case(
        GE,
        None,
        gemini(gu(gtext("list files")), gm(fc()), gu(fr()), gm(gtext(RECOVERY)), gu(gtext(CORRECTION))),
        [],
        "gemini",
    ),
    case(
        BR,
        None,
        bedrock(
            bu({"text": "list files"}),
            ba(btu("tooluse_1")),
            bu(btr("tooluse_1", status="error")),
            ba({"text": RECOVERY}),
            bu({"text": CORRECTION}),
        ),
        [],
        "bedrock-converse",
    ),
    case(
        OC,
        "mistral",
        chat(ou("list files"), oa(None, "abcDEF123"), ot("abcDEF123", "interrupted"), oa(RECOVERY), ou(CORRECTION)),
        [],
        "mistral",
    ),
    case(
        OC,
        "deepseek",
        chat(ou("list files"), oa(None, "call_1"), ot("call_1", "interrupted"), oa(RECOVERY), ou(CORRECTION)),
        [],
        "deepseek",
    ),
]


@pytest.mark.parametrize(("api", "provider", "body", "expected"), SEEDS)
def test_seed_interrupted_tool_call(api: str, provider: str | None, body: Any, expected: Expected) -> None:
    assert [(v.rule, v.message, v.message_index) for v in validate(body, api=api, provider=provider)] == expected


@pytest.mark.parametrize(("api", "provider", "body", "expected"), REPAIRED)
def test_seed_repaired_shape_is_valid(api: str, provider: str | None, body: Any, expected: Expected) -> None:
    assert validate(body, api=api, provider=provider) == expected


# Gemini G4 (Gemini 3 thought signatures): the model is the request's, not the body's, for a native body.
G4 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {k}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
SIGNED = {**fc(), "thoughtSignature": "c2lnbmF0dXJl"}
G3_MODEL = "gemini-3-pro-preview"


def signed_call(name: str = "ls", **extra: Any) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": "{}"},
        "extra_content": {"google": {"thought_signature": "c2lnbmF0dXJl"}},
        **extra,
    }


SIGNATURE_CASES = [
    pytest.param(
        GE,
        None,
        G3_MODEL,
        gemini(gu(gtext("hi")), gm(fc()), gu(fr())),
        [("gemini.G4", G4.format(name="ls", k=1), 1)],
        id="ge-G4",
    ),
    pytest.param(GE, None, None, gemini(gu(gtext("hi")), gm(fc()), gu(fr())), [], id="ge-G4-model-unknown"),
    pytest.param(GE, None, "gemini-2.5-flash", gemini(gu(gtext("hi")), gm(fc()), gu(fr())), [], id="ge-G4-gemini-2"),
    pytest.param(
        GE, None, "gemini-3-pro-image-preview", gemini(gu(gtext("hi")), gm(fc()), gu(fr())), [], id="ge-G4-image-model"
    ),
    pytest.param(
        GE,
        None,
        "models/gemini-3.1-pro-preview",
        gemini(gu(gtext("hi")), gm(SIGNED, fc()), gu(fr(), fr())),
        [],
        id="ge-G4-parallel-first-signed",
    ),
    pytest.param(
        GE,
        None,
        G3_MODEL,
        gemini(
            gu(gtext("hi")),
            gm(SIGNED),
            gu(fr()),
            gm(fc("cat")),
            gu({"functionResponse": {"name": "cat", "response": {}}}),
        ),
        [("gemini.G4", G4.format(name="cat", k=3), 3)],
        id="ge-G4-second-step",
    ),
    # Only the current turn (after the latest user content with more than function responses) is checked.
    pytest.param(
        GE,
        None,
        G3_MODEL,
        gemini(gu(gtext("hi")), gm(fc()), gu(fr()), gm(gtext("ok")), gu(gtext("next"))),
        [],
        id="ge-G4-earlier-turn",
    ),
    pytest.param(
        GE,
        None,
        G3_MODEL,
        gemini(gu(gtext("hi")), gm({**fc(), "thoughtSignature": ""}), gu(fr())),
        [("gemini.G4", G4.format(name="ls", k=1), 1)],
        id="ge-G4-empty-signature",
    ),
    pytest.param(
        GE,
        None,
        G3_MODEL,
        gemini(gu(gtext("hi")), gm({"function_call": {"name": "ls"}, "thought_signature": "x"}), gu(fr())),
        [],
        id="ge-G4-snake-case",
    ),
    pytest.param(
        OC,
        "gemini-openai-compat",
        None,
        {**chat(osys(), ou(), oa(None, "c1"), ot("c1", name="ls")), "model": G3_MODEL},
        [("gemini.G4", G4.format(name="ls", k=2), 2)],
        id="goc-G4-body-model",
    ),
    pytest.param(
        OC,
        "gemini-openai-compat",
        None,
        {
            "model": G3_MODEL,
            "messages": [
                ou(),
                {"role": "assistant", "content": None, "tool_calls": [signed_call()]},
                ot("call_ls", name="ls"),
            ],
        },
        [],
        id="goc-G4-extra-content",
    ),
    pytest.param(
        OC,
        "gemini-openai-compat",
        None,
        {**chat(ou(), oa(None, "c1"), ot("c1", name="ls")), "model": "gemini-2.5-flash"},
        [],
        id="goc-G4-gemini-2",
    ),
    # Vertex AI words G5 its own way, without an index.
    pytest.param(
        GE,
        "vertex",
        None,
        gemini(gu(gtext("hi")), gm(), gu(gtext("x"))),
        [
            (
                "gemini.G5",
                "Unable to submit request because it must include at least one parts field, which describes the prompt "
                "input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
                1,
            )
        ],
        id="vx-G5",
    ),
    pytest.param(
        GE,
        "vertex",
        None,
        gemini(gm(fc()), gu(fr())),
        [
            (
                "gemini.G1",
                "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
                0,
            )
        ],
        id="vx-G1",
    ),
]


@pytest.mark.parametrize(("api", "provider", "model", "body", "expected"), SIGNATURE_CASES)
def test_rule_for_a_model(api: str, provider: str | None, model: str | None, body: Any, expected: Expected) -> None:
    got = [(v.rule, v.message, v.message_index) for v in validate(body, api=api, provider=provider, model=model)]
    assert got == expected


def test_vertex_answers_native_gemini_in_googles_envelope() -> None:
    [v] = validate(gemini(gu(gtext("hi")), gm(), gu(gtext("x"))), api=GE, provider="vertex")
    assert v.body == {"error": {"code": 400, "message": v.message, "status": "INVALID_ARGUMENT"}}
