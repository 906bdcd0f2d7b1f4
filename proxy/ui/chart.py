"""The page's counts over time as inline SVG, drawn here: no chart library, no network.

One row per series (a rule's repairs, an upstream's rejections), 60 one-minute bars each, the
newest on the right. Colours are SVG attributes, not ``style``: the page's CSP allows no inline
style.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

_BAR, _GAP, _ROW, _LABEL = 6, 1, 22, 150
_COLOURS = {"repair": "#2f7d4f", "rejection": "#b3261e"}


def draw(series: Mapping[tuple[str, str], list[int]], *, limit: int = 12) -> str:
    """The SVG element, or a sentence when the last hour had nothing to count."""
    if not series:
        return '<p class="quiet">No repairs or rejections in the last hour.</p>'
    rows = sorted(series.items(), key=lambda item: (item[0][0] != "rejection", -sum(item[1]), item[0][1]))[:limit]
    minutes = len(rows[0][1])
    width = _LABEL + minutes * (_BAR + _GAP) + 40
    height = len(rows) * _ROW + 16
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="repairs per rule and rejections per upstream, '
        'per minute, last hour">'
    ]
    for i, ((kind, name), counts) in enumerate(rows):
        top = i * _ROW
        peak = max(counts) or 1
        label = f"{name} {'repairs' if kind == 'repair' else 'rejections'}"
        out.append(
            f'<text x="0" y="{top + 15}" font-size="12" fill="#333">{escape(label)}</text>'
            f'<text x="{width - 36}" y="{top + 15}" font-size="12" fill="#333">{sum(counts)}</text>'
        )
        for m, n in enumerate(counts):
            if n:
                h = max(2, round(16 * n / peak))
                x = _LABEL + m * (_BAR + _GAP)
                out.append(
                    f'<rect x="{x}" y="{top + 18 - h}" width="{_BAR}" height="{h}" fill="{_COLOURS[kind]}">'
                    f"<title>{escape(label)}: {n}, {minutes - m} min ago</title></rect>"
                )
    out.append(
        f'<text x="{_LABEL}" y="{height - 2}" font-size="10" fill="#666">60 min ago</text>'
        f'<text x="{_LABEL + minutes * (_BAR + _GAP) - 24}" y="{height - 2}" font-size="10" fill="#666">now</text>'
    )
    out.append("</svg>")
    return "".join(out)
