"""Merging runs of same-role Chat messages for providers that want user and assistant to alternate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._ir import Entry
from .an009_unsupported_prefill import CONTINUE_TEXT

if TYPE_CHECKING:
    from ._base import Context, Rule

# What a merge keeps of a later message: its text, its calls, and (in the record) its name. A
# message with anything else (reasoning_content, prefix, audio...) is kept whole instead.
_MERGEABLE_KEYS = frozenset({"role", "content", "tool_calls", "name"})


def merge_runs(entries: list[Entry], ctx: Context, rule: Rule) -> list[Entry]:
    """``entries`` with each run of user or of assistant messages merged into its first message.

    A later message that carries more than text and calls (DeepSeek's ``reasoning_content``, a
    ``prefix`` flag) is never merged, since the merged message keeps the first one's fields:
    a short message of the other role goes between the two instead (the policy's bridge_text
    for an assistant, "Continue." for a user). Linear: a run's first message grows in place.
    """
    merged: list[Entry] = []
    grown = False  # merged[-1].parts is a list built here, which may be extended in place
    for entry in entries:
        previous = merged[-1] if merged else None
        if previous is None or previous.role != entry.role or entry.role not in ("user", "assistant"):
            merged.append(entry)
            grown = False
            continue
        if not set(entry.source) <= _MERGEABLE_KEYS:
            role, text = ("assistant", ctx.policy.bridge_text) if entry.role == "user" else ("user", CONTINUE_TEXT)
            ctx.report(
                rule,
                "bridged",
                entry,
                None,
                f"put a short {role} message {text!r} between this "
                f"{entry.role} message and the one before it, since merging would lose its "
                f"{', '.join(sorted(set(entry.source) - _MERGEABLE_KEYS))}",
            )
            merged += [ctx.dialect.text_entry(role, text), entry]
            grown = False
            continue
        detail = f"merged into the {entry.role} message before it"
        name = entry.source.get("name")
        if name is not None and name != previous.source.get("name"):
            detail += f" (it was from {name!r}; the merged message keeps the first one's name)"
        ctx.report(rule, "merged", entry, None, detail)
        if grown:
            previous.parts.extend(entry.parts)
        else:
            previous.parts = previous.parts + entry.parts
            grown = True
        previous.dirty = True
    return merged
