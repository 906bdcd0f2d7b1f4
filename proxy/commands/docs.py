"""``suture docs``: the sections of the docs that are generated from the code, rewritten in place
(``--write``) or compared with what the code says now (``--check``, which CI runs).

Each section lies between ``<!-- NAME:begin -->`` (a line of its own) and ``<!-- NAME:end -->``
in its file; everything outside the markers is prose, never touched.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from sanitizer.rules import providers_reference
from sanitizer.rules import reference as rules_reference

from ..config_reference import reference as config_reference
from ..routes.reference import reference as routes_reference

GENERATED: dict[str, dict[str, Callable[[], str]]] = {
    "docs/getting-started.md": {"routes": routes_reference},
    "docs/configuration.md": {"config": config_reference},
    "docs/routing.md": {"providers": providers_reference},
    "docs/rules.md": {"rules": rules_reference},
}
"""Each file (relative to the project root), its sections by marker name, and what writes each."""


class DocsError(Exception):
    """A file or a section's markers are not where :data:`GENERATED` says; ``str(e)`` is one line."""


def begin_marker(name: str) -> str:
    return f"<!-- {name}:begin -->\n"


def end_marker(name: str) -> str:
    return f"<!-- {name}:end -->"


def stale_sections(root: Path) -> list[tuple[str, str]]:
    """(file, section) for each section under ``root`` that differs from what its generator writes
    now, or whose file or markers are missing; empty when every section is current."""
    return [(file, name) for file, name, _ in _survey(root)]


def write(root: Path) -> list[tuple[str, str]]:
    """Rewrite every stale section under ``root`` in place; the (file, section) pairs rewritten.
    Raises :class:`DocsError`, writing nothing, when a file or a section's markers are missing."""
    survey = _survey(root)
    missing = [problem for _, _, problem in survey if problem != "stale"]
    if missing:
        raise DocsError("; ".join(missing))
    rewritten = []
    for file in dict.fromkeys(file for file, _, _ in survey):
        path = root / file
        text = original = path.read_bytes().decode("utf-8")
        for name, generate in GENERATED[file].items():
            start, end = _span(text, name)
            if text[start:end] != (new := generate()):
                text = text[:start] + new + text[end:]
                rewritten.append((file, name))
        if text != original:
            path.write_bytes(text.encode("utf-8"))
    return rewritten


def _survey(root: Path) -> list[tuple[str, str, str]]:
    """(file, section, problem): "stale", or the one line that says what is missing."""
    found = []
    for file, sections in GENERATED.items():
        path = root / file
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            found += [(file, name, f"{file}: no such file under {root} (section {name})") for name in sections]
            continue
        except (OSError, UnicodeDecodeError) as exc:
            raise DocsError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
        for name, generate in sections.items():
            try:
                start, end = _span(text, name)
            except DocsError as exc:
                found.append((file, name, f"{file}: {exc}"))
                continue
            if text[start:end] != generate():
                found.append((file, name, "stale"))
    return found


def _span(text: str, name: str) -> tuple[int, int]:
    """Where the section ``name`` lies in ``text``: from after its begin line to its end marker."""
    begin, end = begin_marker(name), end_marker(name)
    if text.count(begin) != 1 or text.count(end) != 1:
        counts = f"{text.count(begin)} and {text.count(end)}"
        raise DocsError(f"section {name} needs one {begin.strip()} line and one {end} marker, not {counts}")
    start = text.index(begin) + len(begin)
    stop = text.index(end)
    if stop < start:
        raise DocsError(f"section {name}: its {end} marker comes before its {begin.strip()} line")
    return start, stop


def project_root() -> Path:
    """The checkout the ``proxy`` package runs from (where its pyproject.toml is), else the
    current directory."""
    import proxy

    checkout = Path(proxy.__file__).resolve().parent.parent
    return checkout if (checkout / "pyproject.toml").is_file() else Path.cwd()


def run(args: argparse.Namespace) -> int:
    root: Path = args.root if args.root is not None else project_root()
    try:
        if args.write:
            rewritten = write(root)
            for file, name in rewritten:
                print(f"rewrote {file}: {name}")
            if not rewritten:
                print(f"all {sum(len(s) for s in GENERATED.values())} generated sections are current")
            return 0
        survey = _survey(root)
    except DocsError as exc:
        print(f"suture docs: {exc}", file=sys.stderr)
        return 2
    for file, name, problem in survey:
        print(f"{file}: section {name} is stale" if problem == "stale" else problem)
    if any(problem == "stale" for _, _, problem in survey):
        print("regenerate with: suture docs --write", file=sys.stderr)
    return 1 if survey else 0
