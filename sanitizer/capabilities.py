"""The capability table: what a model takes that not every model of its provider does.

Some of a provider's rules hold for some of its models only. Claude Opus 4.8 and the Claude models
after it take a ``role: "system"`` message inside ``messages``; the models before it refuse one
("role 'system' is not supported on this model"). The Claude 5 models think when a request says
nothing of thinking, and some of them cannot be told not to, which decides how (and whether) a
request's thinking can be turned off. The repair rules read the answer from their context
(``ctx.capabilities``) and the validator from :func:`model_capabilities`, so both judge a body by
the same row.

Each provider has an ordered tuple of rows: a pattern for model names and the capabilities of
the models it names. The first row whose pattern matches decides. Each provider's last row
matches every name: it is what an unknown or future model is taken to take, the provider's
newest documented behaviour, and its ``source`` says so. A provider with no rows (an
OpenAI-compatible endpoint, DeepSeek's Anthropic one) has none of the capabilities: its bodies
are repaired as they always were.

A model is named the ways providers and gateways spell it: ``claude-opus-4-8``, with a snapshot
date (``claude-opus-4-8-20260528``), Bedrock's ids and inference profiles
(``us.anthropic.claude-opus-4-8-v1:0``, or an ARN ending in one), Vertex's version
(``claude-opus-4-8@20260301``), a gateway's prefix (``anthropic/claude-opus-4.8``), a suffix
(``-latest``, ``-thinking``). :func:`model_key` reads them all as ``claude-opus-4-8``.

What a request declares of itself (its ``anthropic-beta`` values, passed as ``betas``) counts
only where it names no model: Anthropic decides by the model, and a beta does not change its
answer. Claude Code sends ``mid-conversation-system-2026-04-07`` with its system messages, and
Anthropic still refused them on Claude Opus 4.7 (anthropics/claude-code#61242, Claude Code
2.1.146; a gateway's live measurement found the header "makes no difference either way"). A
declaration grants no more than some row of the provider does.

A refusal is the provider's word over the table: a rule run on a provider's refusal
(``sanitizer.rejection``) is given no capability, and so repairs what the refusal names even
where the table said the model would take it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a model takes beyond what every model of its provider does. Each field's default is
    the answer for a model without it: the body is repaired as it must be for every model."""

    mid_conversation_system: bool = False
    """A ``role: "system"`` message inside ``messages``, where the provider's placement rules allow
    one (Anthropic: after a user turn, and before an assistant turn or last)."""
    thinking_on_by_default: bool = False
    """Thinks when the request says nothing of thinking (adaptive thinking on by default): leaving
    ``thinking`` out does not turn it off, ``{"type": "disabled"}`` does."""
    thinking_always_on: bool = False
    """Always thinks: ``thinking: {"type": "disabled"}`` is refused, so no request turns it off."""


NONE = Capabilities()
"""The capabilities of a model the table gives none: every field at its default."""


@dataclass(frozen=True, slots=True)
class Row:
    """Models of one provider, by name, and what they take."""

    pattern: str
    """A regular expression for the whole name as :func:`model_key` reads it; a suffix that
    starts with a letter (``-latest``, ``-fast``) may follow it, a version number may not."""
    capabilities: Capabilities
    source: str
    """Where the row comes from: the provider's documentation or a public report."""


_MID_SYSTEM = Capabilities(mid_conversation_system=True)
# Which models think unasked, and which cannot be told not to: LiteLLM 1.110's model map
# (model_prices_and_context_window.json: ``thinking_on_by_default`` for Opus 5, Sonnet 5 and Haiku
# 5.5; ``thinking_always_on`` for Opus 5.5, Sonnet 5.5, Fable 5 and 5.1, Mythos 5 and 5.1 and
# Mythos Preview), and Anthropic's pages: "On Claude Sonnet 4.6 and earlier models and Claude Haiku
# 4.5, such requests [without a thinking field] don't think" (Migrating to Claude Sonnet 5.5);
# Fable 5 and Mythos 5 have adaptive thinking only and "thinking: {type: "disabled"} is not
# supported", nor on Mythos Preview (Adaptive thinking); Sonnet 5.5 answers "disabled" with a 400
# (What's new in Claude Sonnet 5.5). Opus 4.7 and 4.8 think only when asked.
_THINKS = dataclasses.replace(_MID_SYSTEM, thinking_on_by_default=True)
_ALWAYS_THINKS = dataclasses.replace(_THINKS, thinking_always_on=True)
_THINKING_SOURCE = "LiteLLM 1.110's model map (thinking_on_by_default, thinking_always_on); platform.claude.com"

# Claude Opus 4.8 was the first: "Claude Opus 4.8 accepts role: "system" messages immediately
# after a user turn in the messages array (subject to placement rules) ... No beta header is
# required" (platform.claude.com, What's new in Claude Opus 4.8). The Claude 5 models: the model
# profiles of @langchain/anthropic 1.5.13 (Opus 5, Opus 5.5, Sonnet 5, Sonnet 5.5, Haiku 5.5,
# Fable 5 and 5.1, Mythos 5 and 5.1), and a live measurement (openllm, 2026-07-26: Opus 5, Sonnet
# 5, Fable 5 accept). One version of Anthropic's page said Sonnet 5 does not; the measurement and
# the later profiles say it does. Every model before Opus 4.8 refuses: "models released before
# Opus 4.8 reject them with role 'system' is not supported on this model" (gproxy-transform's
# claude_mid_conv_system), measured on Opus 4.7, 4.1, Sonnet 4.6, 4.5 and Haiku 4.5.
_CLAUDE: tuple[Row, ...] = (
    Row(r"claude-opus-4-8", _MID_SYSTEM, "What's new in Claude Opus 4.8 (platform.claude.com)"),
    Row(
        r"claude-(?:fable|mythos)-5(?:-\d+)?|claude-(?:opus|sonnet)-5-5",
        _ALWAYS_THINKS,
        "@langchain/anthropic 1.5.13 model profiles (Claude 5 models); a live measurement (openllm); "
        + _THINKING_SOURCE,
    ),
    Row(
        r"claude-(?:opus|sonnet|haiku|fable|mythos)-5(?:-\d+)?",
        _THINKS,
        "@langchain/anthropic 1.5.13 model profiles (Claude 5 models); a live measurement (openllm); "
        + _THINKING_SOURCE,
    ),
    Row(r"claude-mythos-preview", Capabilities(thinking_on_by_default=True, thinking_always_on=True), _THINKING_SOURCE),
    Row(
        r"claude-(?:opus|sonnet|haiku)-4(?:-[0-7])?|claude-[1-3](?:-\d)?"
        r"|claude-instant(?:-v?\d(?:[-:]\d+)?)?|claude-v\d(?::\d+)?",
        NONE,
        "gproxy-transform (models before Opus 4.8 refuse); anthropics/claude-code#61242 (Opus 4.7)",
    ),
    Row(
        r".*",
        _MID_SYSTEM,
        "unknown or future model: the newest documented behaviour, every Claude model since Opus 4.8 "
        "(gproxy-transform likewise takes unknown and future models to accept them); not taken to think "
        "unasked, though: a name the table does not know is most often a gateway's alias, and leaving "
        "`thinking` out is the one repair that can pass (thinking-without-history; a model that thinks "
        "anyway refuses the request as it would have)",
    ),
)

# Bedrock's InvokeModel and Vertex AI's rawPredict endpoints: Anthropic's page on mid-conversation
# system messages (2026-05) says "They are not available on Amazon Bedrock, Vertex AI, or Microsoft
# Foundry"; later versions name Claude in Amazon Bedrock (the Messages API at /anthropic/v1/messages,
# not InvokeModel: InvokeModel is "Claude on Amazon Bedrock (Opus 4.6 and earlier)") and Google
# Cloud, in words that do not settle Vertex AI's endpoint. A refusal costs the user a turn, a
# repair only the cache of the turn's own text: no model takes them here until a page says so.
_NOT_THERE = (
    "unknown or future model too: Anthropic's Mid-conversation system messages page (not available "
    "on Amazon Bedrock's InvokeModel or Vertex AI)"
)

# Bedrock and Vertex serve the same models, which think there as they do on Anthropic's API.
_THINKING_ROWS = (
    Row(
        r"claude-(?:fable|mythos)-5(?:-\d+)?|claude-(?:opus|sonnet)-5-5|claude-mythos-preview",
        Capabilities(thinking_on_by_default=True, thinking_always_on=True),
        _THINKING_SOURCE,
    ),
    Row(r"claude-(?:opus|sonnet|haiku)-5(?:-\d+)?", Capabilities(thinking_on_by_default=True), _THINKING_SOURCE),
)

# Cerebras and DashScope have no rows: Cerebras refuses ``reasoning_content`` on every model it
# serves (QwenLM/qwen-code#11045: "for every model, not just thinking"; gpt-oss-120b, zai-glm-4.7,
# qwen-3.8-27b in the reports), a rule of the provider, not of some of its models; no report shows a
# DashScope model that takes or needs what another refuses.
# xAI and Zhipu have none either: xAI parses every model's tool-call arguments (spiceai/spiceai#4734,
# grok-2; nothing says another model differs), and Zhipu's 1214 for a conversation with no user
# message is reported on GLM-4, 4.5 and 5.2 alike (MetaGLM/zhipuai-sdk-python-v4#14,
# anomalyco/opencode#2557, continuedev/continue#13259).
TABLE: Mapping[str, tuple[Row, ...]] = MappingProxyType(
    {
        "anthropic": _CLAUDE,
        "bedrock": (*_THINKING_ROWS, Row(r".*", NONE, _NOT_THERE)),
        "vertex": (*_THINKING_ROWS, Row(r".*", NONE, _NOT_THERE)),
    }
)
"""Each provider's rows, in order: the first whose pattern matches a model decides."""

DECLARED: Mapping[str, str] = MappingProxyType({"mid-conversation-system-2026-04-07": "mid_conversation_system"})
"""The betas (``anthropic-beta`` values) a request declares a capability with, and the capability."""

# A suffix after the version: a word (-latest, -fast, -thinking), never another number.
_COMPILED = {
    provider: tuple((re.compile(rf"(?:{row.pattern})(?:-[a-z][a-z0-9-]*)?"), row) for row in rows)
    for provider, rows in TABLE.items()
}
# What some row of each provider grants: a declaration cannot grant more.
_GRANTABLE = {
    provider: frozenset(
        f.name for row in rows for f in dataclasses.fields(Capabilities) if getattr(row.capabilities, f.name)
    )
    for provider, rows in TABLE.items()
}
_PREFIX = re.compile(r"^(?:[a-z]{2,6}\.)?anthropic\.")  # Bedrock: "anthropic.", "us.anthropic.", "global.anthropic."
_VERSION = re.compile(r"(?<=\d)-v\d+(?::\d+)?$")  # Bedrock's after a version or date: "-v1:0"
_DATE = re.compile(r"-\d{8}$")  # a snapshot: "-20260528"
_BRACKETED = re.compile(r"\[[^\]]*\]$")  # a client's variant: "[1m]"
_DOTTED = re.compile(r"(?<=\d)\.(?=\d)")  # OpenRouter's "claude-opus-4.8"


def model_key(model: str) -> str:
    """``model`` as the table's patterns read it: lower case, without a gateway's prefix or path,
    Bedrock's vendor prefix and version, Vertex's ``@version``, a snapshot date, and with dotted
    versions dashed (``us.anthropic.claude-opus-4-8-v1:0`` and ``claude-opus-4.8@20260301`` are
    both ``claude-opus-4-8``)."""
    # Each rewrite only where its mark is: the fast path reads the model of every request with a
    # system message, and most names need none.
    key = model.strip().lower().rsplit("/", 1)[-1].split("@", 1)[0]
    if "[" in key:
        key = _BRACKETED.sub("", key)
    if "anthropic." in key:
        key = _PREFIX.sub("", key)
    if "-v" in key:
        key = _VERSION.sub("", key)
    if "." in key:
        key = _DOTTED.sub("-", key)
    return _DATE.sub("", key)


def model_capabilities(provider: str | None, model: str | None, betas: Iterable[str] = ()) -> Capabilities:
    """What ``model`` takes on ``provider`` (a name of :data:`sanitizer.providers.TABLE`), by the
    first row that names it. With no model named, what ``betas`` declare, as far as some row of the
    provider grants it; a provider with no rows grants nothing."""
    rows = _COMPILED.get(provider or "", ())
    if not model:
        grantable = _GRANTABLE.get(provider or "", frozenset())
        declared = {DECLARED[b] for b in betas if b in DECLARED} & grantable
        return Capabilities(**dict.fromkeys(sorted(declared), True)) if declared else NONE
    key = model_key(model)
    for pattern, row in rows:
        if pattern.fullmatch(key):
            return row.capabilities
    return NONE
