"""The before/after view in a terminal: one line per message, changes marked, coloured on a tty.

Columns are measured in terminal cells, not characters: a CJK character takes two cells, so a
Chinese user message keeps the notes after it aligned with those of an English one.
"""

from __future__ import annotations

import unicodedata

from .transcript import ADDED, CHANGED, DROPPED, FOLDED, MOVED, RENAMED, SYNTHETIC, Row, TranscriptDiff

_SIGNS = {SYNTHETIC: "+", ADDED: "+", DROPPED: "-", FOLDED: "-", MOVED: ">", CHANGED: "~", RENAMED: "~"}
_COLOURS = {"+": "32", "-": "31", ">": "36", "~": "33"}
_ROLE_WIDTH = 10


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes."""
    return sum(_width(c) for c in text)


def _width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def fit(text: str, width: int) -> str:
    """``text`` cut (with an ellipsis) and padded to exactly ``width`` cells."""
    if cells(text) > width:
        out, used = [], 0
        for char in text:
            w = _width(char)
            if used + w > width - 1:
                break
            out.append(char)
            used += w
        text = "".join(out) + "…"
    return text + " " * (width - cells(text))


def render(diff: TranscriptDiff, *, width: int = 100, colour: bool = False) -> str:
    """Before, then after, as the README shows them, with a sign and a note for each change:
    ``+`` added (a synthetic result), ``-`` dropped or folded, ``>`` moved, ``~`` changed."""
    width = max(width, 40)
    lines = []
    if not diff.forwarded:
        lines.append("Forwarded unchanged (nothing repaired, or report or strict mode):")
        lines += _side(diff.before, width, colour, before=True)
    else:
        lines.append("Before:")
        lines += _side(diff.before, width, colour, before=True)
        lines.append("")
        lines.append("After:")
        lines += _side(diff.after, width, colour, before=False)
    if diff.request_repairs:
        lines.append("")
        lines.append("Also repaired in the request as a whole: " + ", ".join(diff.request_repairs))
    return "\n".join(lines) + "\n"


def _side(rows: tuple[Row, ...], width: int, colour: bool, *, before: bool) -> list[str]:
    notes = [_note(row, before) for row in rows]
    note_width = min(max((cells(n) for n in notes), default=0), width // 3)
    text_width = max(width - 2 - 5 - _ROLE_WIDTH - (note_width + 2 if note_width else 0), 10)
    out = []
    for row, note in zip(rows, notes, strict=True):
        sign = next((_SIGNS[m] for m in row.marks if m in _SIGNS), " ")
        line = f"{sign} #{row.index:<3} {fit(row.role, _ROLE_WIDTH - 1)} {_summary(row, text_width)}"
        if note_width:
            line += "  " + fit(note, note_width)
        line = line.rstrip()
        if colour and sign in _COLOURS:
            line = f"\x1b[{_COLOURS[sign]}m{line}\x1b[0m"
        out.append(line)
    return out


def _summary(row: Row, width: int) -> str:
    """The row's summary in ``width`` cells. A text the repair merged in from another message must
    read whole (the reader looks for it there), so when the line is too long what is cut is the
    rest of the text before it: most often a synthetic result's long explanation."""
    summary = row.summary()
    if cells(summary) <= width or not row.merged:
        return fit(summary, width)
    start = min((at for at in (summary.rfind(text) for text in row.merged) if at >= 0), default=-1)
    if start <= 0:
        return fit(summary, width)
    tail = summary[start:]
    room = width - cells(tail) - 1
    if room < 10:
        return fit(summary, width)
    return fit(fit(summary[:start].rstrip(), room) + " " + tail, width)


def _note(row: Row, before: bool) -> str:
    parts = [m for m in row.marks if m != CHANGED or RENAMED not in row.marks]
    if row.note:
        parts.append(row.note)
    if before and row.repairs:
        parts.append(" ".join(row.repairs))
    return ", ".join(parts)
