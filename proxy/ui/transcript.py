"""A transcript before and after repair, one row per message, with what changed marked.

:func:`compare` is pure: from the client's body, the body forwarded and the repairs (a capture
holds all three) it gives both sides as rows (role, a text summary, tool calls and results
with their ids) and marks what changed: synthetic results, moved messages, dropped or folded
messages, changed messages and renamed ids. The page and ``suture fix|captures show --diff``
both draw it.

It follows texts, not positions: a message no forwarded message matches whole, but whose every
text was forwarded inside another message (a user text merged after a synthetic result), is
marked moved, with where its text went. Only a text the forwarded transcript lacks is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

# Marks, as the page's CSS classes and the terminal's labels name them.
SYNTHETIC, ADDED, MOVED, DROPPED, FOLDED, CHANGED, RENAMED = (
    "synthetic",
    "added",
    "moved",
    "dropped",
    "folded",
    "changed",
    "renamed",
)
# A summary longer than this is cut: the page and the terminal show one line per message.
MAX_TEXT = 2000
_SPACE = re.compile(r"\s+")
_FOLDING_ACTIONS = frozenset({"folded", "merged", "converted", "flattened"})


@dataclass(frozen=True, slots=True)
class ToolItem:
    """A tool call or a tool result inside a message."""

    kind: str
    """``call`` or ``result``."""
    id: str
    name: str = ""
    error: bool = False

    def label(self) -> str:
        if self.kind == "call":
            return f"call {self.name or '?'} ({self.id})"
        return f"result {self.id}{' (error)' if self.error else ''}"


@dataclass(frozen=True, slots=True)
class Row:
    """One message of one side."""

    index: int
    role: str
    text: str
    items: tuple[ToolItem, ...] = ()
    marks: tuple[str, ...] = ()
    note: str = ""
    repairs: tuple[str, ...] = ()
    """Codes of the repairs reported at this message (the before side only)."""
    merged: tuple[str, ...] = ()
    """Texts of other before messages that the repair put in this one (the after side only):
    a view that must cut the line cuts the rest, so these read whole."""

    def summary(self) -> str:
        """The message on one line: its tool calls and results, then its text."""
        parts = [item.label() for item in self.items]
        if self.text:
            parts.append(_quote(self.text) if self.items else self.text)
        return "; ".join(parts) or "(empty)"


@dataclass(frozen=True, slots=True)
class TranscriptDiff:
    api: str
    before: tuple[Row, ...]
    after: tuple[Row, ...]
    forwarded: bool
    """False when the client's body went on unchanged (nothing repaired, report or strict mode)."""
    request_repairs: tuple[str, ...] = field(default=())
    """Codes of the repairs made to the request as a whole (an added tools definition...)."""

    @property
    def changed(self) -> bool:
        return any(row.marks for row in (*self.before, *self.after))


def compare(original: Any, forwarded: Any, repairs: Iterable[Mapping[str, Any]], api: str) -> TranscriptDiff:
    """The two sides of a repair. ``forwarded`` None means the original went on as it was;
    ``repairs`` are as a capture stores them (``Repair.as_dict()``)."""
    repairs = list(repairs)
    by_index: dict[int, list[Mapping[str, Any]]] = {}
    for repair in repairs:
        index = repair.get("message_index")
        if isinstance(index, int):
            by_index.setdefault(index, []).append(repair)
    whole = tuple(str(r.get("code", "?")) for r in repairs if not isinstance(r.get("message_index"), int))
    before_raw = messages_of(original, api)
    before_parsed = [_parse(i, m, api) for i, m in enumerate(before_raw)]
    before = [row for row, _ in before_parsed]
    before = [
        _with(row, repairs=tuple(dict.fromkeys(str(r.get("code", "?")) for r in by_index.get(row.index, ()))))
        for row in before
    ]
    if forwarded is None:
        return TranscriptDiff(api, tuple(before), tuple(before), False, whole)
    after_raw = messages_of(forwarded, api)
    after_parsed = [_parse(i, m, api) for i, m in enumerate(after_raw)]
    after = [row for row, _ in after_parsed]
    before_keys = [_key(m) for m in before_raw]
    after_keys = [_key(m) for m in after_raw]

    pair: dict[int, int] = {}  # after index -> before index
    unused = list(range(len(before)))
    for a, key in enumerate(after_keys):
        for b in unused:
            if before_keys[b] == key:
                pair[a] = b
                unused.remove(b)
                break
    similar: set[int] = set()
    for a in range(len(after)):
        if a in pair:
            continue
        for b in unused:
            if _similar(before[b], after[a]):
                pair[a] = b
                similar.add(a)
                unused.remove(b)
                break

    reported_moved = {i for i, found in by_index.items() if any(r.get("action") == "moved" for r in found)}
    order = [(a, pair[a]) for a in sorted(pair)]
    kept = _increasing([(a, b) for a, b in order if b not in reported_moved])
    moved_after = {a for a, _ in order if (a, pair[a]) not in kept}

    found = _texts_found(unused, [parts for _, parts in before_parsed], [parts for _, parts in after_parsed], pair)
    merged_into: dict[int, list[int]] = {}  # after index -> the unmatched before messages it took text from
    for b, places in found.items():
        for a in sorted({a for a, _ in places}):
            merged_into.setdefault(a, []).append(b)

    before_marks: dict[int, list[str]] = {}
    before_notes: dict[int, str] = {}
    new_after: list[Row] = []
    old_results = {item.id for row in before for item in row.items if item.kind == "result"}
    for a, row in enumerate(after):
        marks: list[str] = []
        notes: list[str] = []
        if a in pair:
            b = pair[a]
            if a in moved_after:
                marks.append(MOVED)
                notes.append(f"was #{b}")
                before_marks.setdefault(b, []).append(MOVED)
                before_notes[b] = f"now #{a}"
            if a in similar:
                change = _change(before[b], row)
                marks.extend(change[0])
                notes.append(change[1])
                before_marks.setdefault(b, []).extend(change[0])
                before_notes[b] = "; ".join(n for n in (before_notes.get(b, ""), change[1]) if n)
        elif any(item.kind == "result" and item.id not in old_results for item in row.items):
            marks.append(SYNTHETIC)
        elif a not in merged_into:
            marks.append(ADDED)
        merged: list[str] = []
        if a in merged_into:
            marks.append(MOVED)
            notes.append("has the text of " + ", ".join(f"#{b}" for b in merged_into[a]))
            merged = [_clip(text) for b in merged_into[a] for at, text in found[b] if at == a]
        new_after.append(
            _with(
                row,
                marks=tuple(dict.fromkeys(marks)),
                note="; ".join(n for n in notes if n),
                merged=tuple(t for t in merged if t and t in row.text),
            )
        )
    new_before: list[Row] = []
    for b, row in enumerate(before):
        marks = before_marks.get(b, [])
        note = before_notes.get(b, "")
        if b in unused and b in found:
            went = sorted({a for a, _ in found[b]})
            marks = [MOVED]
            notes = ["now in " + ", ".join(f"#{a}" for a in went)]
            sent = {(i.kind, i.id) for other in after for i in other.items}
            lost = [i for i in row.items if (i.kind, i.id) not in sent]
            if lost:
                marks.append(CHANGED)
                notes.append(f"{len(lost)} tool block(s) not forwarded with it")
            note = "; ".join(notes)
        elif b in unused:
            actions = {str(r.get("action")) for r in by_index.get(b, ())}
            marks = [FOLDED if actions & _FOLDING_ACTIONS else DROPPED]
        new_before.append(_with(row, marks=tuple(dict.fromkeys(marks)), note=note))
    return TranscriptDiff(api, tuple(new_before), tuple(new_after), True, whole)


def messages_of(body: Any, api: str) -> list[Any]:
    """The messages of a body in ``api``'s format (an empty list when it has none)."""
    if not isinstance(body, Mapping):
        return []
    if api == "openai-responses":
        items = body.get("input")
        if isinstance(items, str):
            return [{"role": "user", "content": items}]
        return list(items) if isinstance(items, list) else []
    if api == "gemini":
        contents = body.get("contents")
        return list(contents) if isinstance(contents, list) else []
    messages = body.get("messages")
    return list(messages) if isinstance(messages, list) else []


def _parse(index: int, message: Any, api: str) -> tuple[Row, tuple[str, ...]]:
    """The message's row and its texts, whole and with spaces folded: what :func:`compare` follows.
    Placeholders (``[thinking]``, ``[image]``) are not texts: they would match each other."""
    row = _row(index, message, api)
    if not isinstance(message, Mapping):
        return row, ()
    texts: list[str] = []
    if api == "openai-responses" and message.get("type") not in (None, "message"):
        if str(message.get("type")).endswith("_output"):
            texts.append(_text_of(message.get("output")))
    elif api == "openai-chat":
        texts.append(_text_of(message.get("content")))
    elif api == "gemini":
        for part in message.get("parts") or ():
            if isinstance(part, Mapping) and "text" in part and not part.get("thought"):
                texts.append(str(part["text"]))
            elif isinstance(part, Mapping) and isinstance(part.get("functionResponse"), Mapping):
                texts.append(_compact(part["functionResponse"].get("response")))
    else:
        content = message.get("content")
        for block in content if isinstance(content, list) else [content]:
            if not isinstance(block, Mapping):
                texts.append(_text_of(block))
            elif str(block.get("type")).endswith("tool_result"):
                texts.append(_text_of(block.get("content")))
            elif isinstance(block.get("toolResult"), Mapping):
                texts.append(_text_of(block["toolResult"].get("content")))
            elif "text" in block and block.get("type") in (None, "text", "input_text", "output_text"):
                texts.append(str(block["text"]))
    folded = (_SPACE.sub(" ", text).strip() for text in texts)
    return row, tuple(text for text in folded if text)


_MIN_CONTAINED = 16
"""The shortest text a moved message is recognised by inside a longer one."""


def _texts_found(
    unused: Iterable[int],
    before: Sequence[tuple[str, ...]],
    after: Sequence[tuple[str, ...]],
    pair: Mapping[int, int],
) -> dict[int, list[tuple[int, str]]]:
    """For each unmatched before message whose every text was forwarded, where each went:
    ``(after index, text)``. A text found as a whole text of an after message wins over one found
    inside a longer text (a client that joins strings); texts the after message's own before
    message already had are not free to be claimed."""
    free: list[list[str]] = []
    for a, parts in enumerate(after):
        left = list(parts)
        for text in before[pair[a]] if a in pair else ():
            if text in left:
                left.remove(text)
        free.append(left)
    found: dict[int, list[tuple[int, str]]] = {}
    for b in unused:
        if not before[b]:
            continue
        places: list[tuple[int, str]] = []
        for text in before[b]:
            at = next((a for a, left in enumerate(free) if text in left), None)
            if at is not None:
                free[at].remove(text)
            else:
                # Inside a longer text only when long enough not to be there by chance ("ok" is in
                # many texts): a short text must have been forwarded as a text of its own.
                contained = len(text) >= _MIN_CONTAINED
                at = next((a for a, left in enumerate(free) if contained and any(text in o for o in left)), None)
            if at is None:
                break
            places.append((at, text))
        else:
            found[b] = places
    return found


def _row(index: int, message: Any, api: str) -> Row:
    if not isinstance(message, Mapping):
        return Row(index, "?", _clip(_compact(message)))
    role = str(message.get("role") or "")
    texts: list[str] = []
    items: list[ToolItem] = []
    if api == "openai-responses" and message.get("type") not in (None, "message"):
        kind = str(message.get("type"))
        if kind in ("function_call", "custom_tool_call"):
            items.append(ToolItem("call", str(message.get("call_id", "?")), str(message.get("name", ""))))
            role = role or "assistant"
        elif kind in ("function_call_output", "custom_tool_call_output"):
            items.append(ToolItem("result", str(message.get("call_id", "?"))))
            texts.append(_text_of(message.get("output")))
            role = role or "tool"
        else:
            texts.append(f"[{kind}]")
            role = role or "assistant"
        return Row(index, role, _clip(" ".join(t for t in texts if t)), tuple(items))
    if api == "openai-chat":
        texts.append(_text_of(message.get("content")))
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                function = call.get("function")
                name = function.get("name", "") if isinstance(function, Mapping) else ""
                items.append(ToolItem("call", str(call.get("id", "?")), str(name)))
        if role in ("tool", "function"):
            items.append(ToolItem("result", str(message.get("tool_call_id") or message.get("name") or "?")))
    elif api == "gemini":
        for part in message.get("parts") or ():
            if not isinstance(part, Mapping):
                continue
            if "text" in part:
                texts.append("[thought]" if part.get("thought") else str(part["text"]))
            elif isinstance(part.get("functionCall"), Mapping):
                call = part["functionCall"]
                items.append(ToolItem("call", str(call.get("id") or call.get("name", "?")), str(call.get("name", ""))))
            elif isinstance(part.get("functionResponse"), Mapping):
                answer = part["functionResponse"]
                items.append(ToolItem("result", str(answer.get("id") or answer.get("name", "?"))))
                texts.append(_compact(answer.get("response")))
            else:
                texts.append(f"[{next(iter(part), 'part')}]")
    else:  # anthropic-messages, bedrock-converse, openai-responses messages
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, Mapping):
                _block(block, texts, items)
            else:
                texts.append(_text_of(block))
    return Row(index, role or "?", _clip(" ".join(t for t in texts if t)), tuple(items))


def _block(block: Mapping[str, Any], texts: list[str], items: list[ToolItem]) -> None:
    kind = block.get("type")
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        items.append(ToolItem("call", str(block.get("id", "?")), str(block.get("name", ""))))
    elif kind is not None and str(kind).endswith("tool_result"):
        items.append(ToolItem("result", str(block.get("tool_use_id", "?")), error=bool(block.get("is_error"))))
        texts.append(_text_of(block.get("content")))
    elif isinstance(block.get("toolUse"), Mapping):  # Bedrock
        use = block["toolUse"]
        items.append(ToolItem("call", str(use.get("toolUseId", "?")), str(use.get("name", ""))))
    elif isinstance(block.get("toolResult"), Mapping):
        result = block["toolResult"]
        items.append(ToolItem("result", str(result.get("toolUseId", "?")), error=result.get("status") == "error"))
        texts.append(_text_of(result.get("content")))
    elif "text" in block and kind in (None, "text", "input_text", "output_text"):
        texts.append(str(block["text"]))
    elif kind in ("thinking", "redacted_thinking", "reasoning") or "reasoningContent" in block:
        texts.append("[thinking]")
    else:
        texts.append(f"[{kind or next(iter(block), 'block')}]")


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part, Mapping) and "json" in part:
                out.append(_compact(part["json"]))
            elif isinstance(part, str):
                out.append(part)
            elif isinstance(part, Mapping):
                out.append(f"[{part.get('type') or next(iter(part), 'part')}]")
        return " ".join(out)
    return _compact(content)


def _compact(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _clip(text: str) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _quote(text: str) -> str:
    return '"' + text + '"'


def _key(message: Any) -> bytes:
    try:
        return orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(message).encode()


def _similar(before: Row, after: Row) -> bool:
    """The same message, changed: same role and the same text, or tool calls or results in common."""
    if before.role != after.role:
        return False
    if before.text and before.text == after.text:
        return True
    ids = {(i.kind, i.id) for i in before.items}
    if ids & {(i.kind, i.id) for i in after.items}:
        return True
    names = [(i.kind, i.name) for i in before.items]
    return bool(names) and names == [(i.kind, i.name) for i in after.items]


def _change(before: Row, after: Row) -> tuple[list[str], str]:
    marks, notes = [CHANGED], []
    old = [i for i in before.items if i.kind == "call"]
    new = [i for i in after.items if i.kind == "call"]
    renamed = [f"{o.id} → {n.id}" for o, n in zip(old, new, strict=False) if o.id != n.id and o.name == n.name]
    if renamed:
        marks.append(RENAMED)
        notes.append("renamed " + ", ".join(renamed))
    if len(after.items) < len(before.items):
        notes.append(f"{len(before.items) - len(after.items)} tool block(s) fewer")
    elif len(after.items) > len(before.items):
        notes.append(f"{len(after.items) - len(before.items)} tool block(s) more")
    if before.text != after.text:
        notes.append("text changed")
    return marks, "; ".join(notes)


def _increasing(pairs: Sequence[tuple[int, int]]) -> set[tuple[int, int]]:
    """The longest run of ``pairs`` (in after order) whose before indices increase: what stayed put.
    Patience sorting, O(n log n): a transcript may have thousands of messages."""
    tails: list[int] = []  # tails[k]: the index in pairs ending the best run of length k + 1
    back = [-1] * len(pairs)
    for i, (_, b) in enumerate(pairs):
        k = _bisect(pairs, tails, b)
        if k > 0:
            back[i] = tails[k - 1]
        if k == len(tails):
            tails.append(i)
        else:
            tails[k] = i
    out = set()
    i = tails[-1] if tails else -1
    while i >= 0:
        out.add(pairs[i])
        i = back[i]
    return out


def _bisect(pairs: Sequence[tuple[int, int]], tails: list[int], b: int) -> int:
    low, high = 0, len(tails)
    while low < high:
        middle = (low + high) // 2
        if pairs[tails[middle]][1] < b:
            low = middle + 1
        else:
            high = middle
    return low


def _with(row: Row, **changes: Any) -> Row:
    values = {name: getattr(row, name) for name in Row.__slots__}
    values.update(changes)
    return Row(**values)
