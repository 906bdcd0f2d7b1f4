"""The proxy's layers, pinned as ``tests/sanitizer/test_api.py`` pins the core's purity: which module
may import which, read from the source (every import counts: at the top, inside a function, or
for type checking only), so that the next leak fails CI instead of being found in review."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("proxy", "sanitizer", "bench", "tests")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if any(part.startswith(".") for part in parts):
                continue  # bench/.venvs and the like: installed packages, not the project's
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


MODULES = _modules()


def _imported(module: str, path: Path, is_package: bool) -> Iterator[str]:
    """The project modules ``module`` imports, each once, however it imports them."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    seen = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            prefix = ".".join([*base, *([node.module] if node.module else [])])
            names = [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module and name not in seen:
                seen.add(name)
                yield name


IMPORTS = {module: set(_imported(module, *where)) for module, where in MODULES.items()}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles (strongly connected components of more than one module), Tarjan's way."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", ["proxy", "sanitizer"])
def test_no_import_cycles(package: str) -> None:
    graph = {
        m: {i for i in imports if _within(i, (package,))} for m, imports in IMPORTS.items() if _within(m, (package,))
    }
    assert _cycles(graph) == []


# (who, what it must not import, why). Each names a direction the code keeps.
FORBIDDEN = [
    (("sanitizer",), ("proxy", "bench", "tests"), "the core is a library: the proxy uses it, never the reverse"),
    (("proxy", "bench"), ("tests",), "shipped and benchmark code stands without the test suite"),
    (
        ("proxy.http1",),
        ("proxy",),
        "the HTTP/1.1 client is a library of its own (h11's and httpcore's place): it knows no Suture module",
    ),
    (
        ("proxy.upstreams",),
        (
            "proxy.routes",
            "proxy.exchange",
            "proxy.observers",
            "proxy.ui",
            "proxy.commands",
            "proxy.settings",
            "sanitizer.rejection",
        ),
        "upstream clients send and relay: they take plain values and know no request, setting or repair",
    ),
    (
        ("proxy.exchange",),
        ("proxy.observers", "proxy.ui", "proxy.tracing", "proxy.commands", "proxy.routes.endpoints"),
        "the exchange sits below its observers and the request path: they import it",
    ),
    (("proxy.observers",), ("proxy.routes", "proxy.commands", "proxy.ui"), "observers read a finished exchange"),
    (
        ("proxy.settings", "proxy.provider_table"),
        ("proxy.routes", "proxy.upstreams", "proxy.exchange", "proxy.observers", "proxy.app"),
        # The HTTP/1.1 client is a library below everything: settings parse a proxy URL with it.
        "settings are read by everything: they read the provider table and nothing of the server",
    ),
    (
        ("proxy.capture", "proxy.redaction"),
        ("proxy.payloads", "proxy.routes", "proxy.commands"),
        "the request path never reaches into the CLI's modules",
    ),
    (
        ("proxy.routes", "proxy.exchange", "proxy.observers", "proxy.upstreams", "proxy.http1", "proxy.app"),
        ("proxy.commands", "proxy.cli"),
        "the request path never imports the CLI",
    ),
]


@pytest.mark.parametrize(("who", "forbidden", "why"), FORBIDDEN, ids=[" ".join(rule[0]) for rule in FORBIDDEN])
def test_layers(who: tuple[str, ...], forbidden: tuple[str, ...], why: str) -> None:
    leaks = sorted(
        f"{module} imports {imported}"
        for module, imports in IMPORTS.items()
        if _within(module, who)
        for imported in imports
        if _within(imported, forbidden) and not _within(imported, who)
    )
    assert leaks == [], why


def test_the_layer_reader_sees_every_kind_of_import() -> None:
    """The reader itself: a type-checking import and one inside a function count like any other."""
    assert "proxy.exchange" in IMPORTS["proxy.tracing"]  # at the top
    assert "proxy.ui.live" in IMPORTS["proxy.app"]  # inside a function
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
