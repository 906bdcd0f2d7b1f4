"""``python -m tests.corpus``: the corpus table per provider.

Columns: cases; the validator reports the provider's text word for word, or in the same words
(backticks and spacing aside); cases no repair can exist for; repaired bodies that pass the
validator; bodies that kept every text that must survive; cases marked xfail (not passing yet).
"""

from __future__ import annotations

from collections import defaultdict

from tests._support.corpus import judge, load_cases

_COLUMNS = ("cases", "exact", "same words", "unrepairable", "repaired", "kept", "xfail")


def main() -> None:
    rows: dict[str, list[int]] = defaultdict(lambda: [0] * len(_COLUMNS))
    for case in load_cases():
        verdict = judge(case)
        row = rows[f"{case.provider} ({case.api})"]
        for i, counted in enumerate(
            (
                True,
                verdict.reports_exact_text,
                verdict.reports_same_text,
                bool(case.data.get("unrepairable")),
                verdict.repaired_valid,
                not verdict.lost,
                bool(case.data.get("xfail")),
            )
        ):
            row[i] += counted
    widths = [max(len(c), 5) for c in _COLUMNS]
    print(f"{'provider (api)':42} " + " ".join(f"{c:>{w}}" for c, w in zip(_COLUMNS, widths, strict=True)))
    totals = [0] * len(_COLUMNS)
    for name, row in sorted(rows.items()):
        print(f"{name:42} " + " ".join(f"{n:>{w}}" for n, w in zip(row, widths, strict=True)))
        totals = [a + b for a, b in zip(totals, row, strict=True)]
    print(f"{'all':42} " + " ".join(f"{n:>{w}}" for n, w in zip(totals, widths, strict=True)))


if __name__ == "__main__":
    main()
