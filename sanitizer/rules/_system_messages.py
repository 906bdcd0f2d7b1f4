"""System messages inside an Anthropic body's ``messages``: which may stay, and where the rest go.

Shared by system-role-message (AN014, first of all rules: what the client sent) and
stranded-system-message (AN021, last but one: what the other repairs left).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import SanitizeError
from .._ir import CALL, RESULT, SERVER_CALL, SERVER_RESULT, TEXT, Entry, Part, Transcript
from ..dialects._shape import type_name
from ._base import quoted_content

if TYPE_CHECKING:
    from ._base import Context, Rule

# How Claude Code itself hands its reminders to a model that takes no system message inside
# messages: a text in the user turn (its "legacy system reminder"; mistral-common#169 shows one).
REMINDER = "<system-reminder>\n{text}\n</system-reminder>"
_PLACEMENT = "a system message must follow a user message and be last or before an assistant message"


def settle(rule: Rule, transcript: Transcript, ctx: Context, *, stranded: bool = False) -> None:
    """Leave each run of system messages the model takes where Anthropic's placement rules allow
    it; move the others' texts into the user turn they stand by (a run that opens the
    conversation: into the top-level system field), and remove blank ones. ``stranded``: the runs
    were placed as sent, and another repair moved what stood around them."""
    entries = transcript.entries
    if not any(e.role == "system" for e in entries):
        return
    takes = ctx.capabilities.mid_conversation_system
    if not takes:
        why = "this model takes no system message inside messages here"
    elif stranded:
        why = f"the message it stood by was removed, and {_PLACEMENT}"
    else:
        why = _PLACEMENT
    hoisted: list[Any] = []
    out: list[Entry] = []
    carried: list[Part] = []
    index = 0
    while index < len(entries):
        entry = entries[index]
        if entry.role != "system":
            if carried:
                if entry.role == "user":
                    entry = _with_reminder(entry, carried, at_start=True)
                else:
                    out.append(_reminder_entry(carried))
                carried = []
            out.append(entry)
            index += 1
            continue
        end = index
        while end < len(entries) and entries[end].role == "system":
            end += 1
        run = [e for e in entries[index:end] if _said(rule, e, ctx)]
        following = entries[end].role if end < len(entries) else None
        if not run:
            pass
        elif not out:
            # It opens the conversation: it is the system prompt, moved to where the API takes one.
            out += _hoist(rule, run, hoisted, ctx)
        elif takes and placed(out[-1].role, _ends_in_server_tool(out[-1]), following):
            out += run
        elif out[-1].role == "user":
            out[-1] = _with_reminder(
                out[-1], _inline(rule, run, ctx, why, "the user message before it"), at_start=False
            )
        else:
            carried += _inline(rule, run, ctx, why, "the user turn after it")
        index = end
    if carried:
        out.append(_reminder_entry(carried))
    transcript.entries = out
    if hoisted:
        transcript.body_updates["system"] = _merged(transcript.field("system"), hoisted)


def settled(body: dict[str, Any], ctx: Context) -> bool:
    """Whether :func:`settle` would leave ``body`` as it is: a model that takes system messages,
    each run placed and none blank. Reads what the format's check read (roles, block types)."""
    if not ctx.capabilities.mid_conversation_system:
        return False
    messages = body["messages"]
    for start, end in _runs([m["role"] for m in messages]):
        if not all(_raw_says_something(m["content"]) for m in messages[start:end]):
            return False
        before = messages[start - 1] if start else None
        following = messages[end]["role"] if end < len(messages) else None
        if before is None or not placed(before["role"], _raw_ends_in_server_tool(before), following):
            return False
    return True


def placed(before: str | None, after_server_tool: bool, following: str | None) -> bool:
    """Anthropic's placement rule for a run of system messages: after a user message (or an
    assistant message ending in a server tool's use or result), and last or before an assistant
    message; so never first, nor between a tool_use and its tool_result (platform.claude.com,
    Mid-conversation system messages: "Consecutive system messages are accepted and treated as a
    single system section, which follows the same placement rule as a whole")."""
    return (before == "user" or after_server_tool) and following in (None, "assistant")


def _runs(roles: list[str]) -> list[tuple[int, int]]:
    """Where each run of consecutive system messages starts and ends (exclusive)."""
    runs: list[tuple[int, int]] = []
    start = None
    for index, role in enumerate([*roles, None]):
        if role == "system" and start is None:
            start = index
        elif role != "system" and start is not None:
            runs.append((start, index))
            start = None
    return runs


def _ends_in_server_tool(entry: Entry) -> bool:
    # A turn paused on a server tool; one that also calls the client's tools awaits their results.
    last = entry.parts[-1].kind if entry.parts else None
    return entry.role == "assistant" and last in (SERVER_CALL, SERVER_RESULT) and not entry.has(CALL)


def _raw_ends_in_server_tool(message: dict[str, Any]) -> bool:
    content = message["content"]
    if message["role"] != "assistant" or type(content) is not list or not content:
        return False
    kinds = [block["type"] for block in content]
    last = kinds[-1]
    server = last in ("server_tool_use", "mcp_tool_use") or (last.endswith("_tool_result") and last != "tool_result")
    return server and "tool_use" not in kinds


def _raw_says_something(content: Any) -> bool:
    if type(content) is str:
        return bool(content.strip())
    return any(block.get("type") != "text" or _text(block).strip() for block in content)


def _said(rule: Rule, entry: Entry, ctx: Context) -> bool:
    if any(p.kind != TEXT or _text(p.raw).strip() for p in entry.parts):
        return True
    ctx.report(rule, "removed", entry, None, "removed a blank system message")
    return False


def _hoist(rule: Rule, run: list[Entry], hoisted: list[Any], ctx: Context) -> list[Entry]:
    """The run's texts, for the top-level system; what it cannot hold, as user messages."""
    kept: list[Entry] = []
    for entry in run:
        texts = [p for p in entry.parts if p.kind == TEXT and _text(p.raw).strip()]
        others = [p for p in entry.parts if p.kind != TEXT]
        hoisted += [p.raw for p in texts]
        if texts:
            what = quoted_content(Entry(entry.role, texts, entry.source, entry.origin))
            ctx.report(rule, "moved", entry, None, f"moved a system message into the top-level system field: {what}")
        if others:
            entry.role = "user"
            entry.parts = others
            entry.source = {**entry.source, "role": "user"}
            entry.dirty = True
            kept.append(entry)
            ctx.report(rule, "kept", entry, None, "kept the system message's non-text blocks as a user message")
    return kept


def _inline(rule: Rule, run: list[Entry], ctx: Context, why: str, place: str) -> list[Part]:
    """The run's parts as they go into a user message: each text wrapped as a reminder."""
    parts: list[Part] = []
    for entry in run:
        said = [p for p in entry.parts if p.kind != TEXT or _text(p.raw).strip()]
        parts += [Part(TEXT, _reminder(p.raw)) if p.kind == TEXT else p for p in said]
        what = quoted_content(Entry(entry.role, said, entry.source, entry.origin))
        ctx.report(rule, "moved", entry, None, f"moved a system message into {place} ({why}): {what}")
    return parts


def _reminder(raw: Any) -> Any:
    """A system text as a reminder in a user message, wrapped once, its other keys kept."""
    text = _text(raw)
    wrapped = text if text.lstrip().startswith("<system-reminder>") else REMINDER.format(text=text)
    return {**raw, "text": wrapped} if isinstance(raw, dict) else wrapped


def _with_reminder(entry: Entry, reminder: list[Part], *, at_start: bool) -> Entry:
    """``entry`` (a user message) with the reminder's parts at its end, or at its start after its
    tool results (which must open the message). A string content stays a string when the
    reminder is strings too."""
    parts = entry.parts
    strings = [p.raw for p in reminder if isinstance(p.raw, str)]
    if len(parts) == 1 and isinstance(parts[0].raw, str) and len(strings) == len(reminder):
        texts = [*strings, parts[0].raw] if at_start else [parts[0].raw, *strings]
        joined = [Part(TEXT, "\n\n".join(texts))]
    else:
        at = len(parts)
        if at_start:
            at = 0
            while at < len(parts) and parts[at].kind == RESULT:
                at += 1
        joined = [*parts[:at], *reminder, *parts[at:]]
    return Entry(entry.role, joined, entry.source, entry.origin, dirty=True)


def _reminder_entry(reminder: list[Part]) -> Entry:
    return Entry("user", reminder, {"role": "user"}, None, dirty=True)


def _text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    text = raw.get("text") if isinstance(raw, dict) else None
    return text if isinstance(text, str) else ""


def _merged(system: Any, moved: list[Any]) -> str | list[Any]:
    """The top-level system prompt with the moved texts after it, in their order."""
    if system is not None and not isinstance(system, str | list):
        raise SanitizeError("system", f"must be a string or an array of text blocks, not {type_name(system)}")
    if (system is None or isinstance(system, str)) and all(isinstance(raw, str) for raw in moved):
        return "\n\n".join([*([system] if system else []), *moved])
    head: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) and system else []
    if isinstance(system, list):
        head = list(system)
    return head + [{"type": "text", "text": raw} if isinstance(raw, str) else raw for raw in moved]
