"""Who imports whom in ``stockdemo/``, read from the source with ``ast``; and the circles in it.

    .venv/bin/python -m tests.import_graph     # prints each import circle, exits 1 if any

Every import counts, at the top of a module or inside a function (a lazy import is still
a dependency), under ``if TYPE_CHECKING`` too. ``from package import name`` is an import
of the module ``package.name`` when there is one, else of ``package``; the package's own
``__init__`` is not counted as a dependency of its submodules (Python runs it first, but
a submodule does not use what it defines).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "stockdemo"


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package -> its file ("stockdemo.ui" is stockdemo/ui/__init__.py)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(module of the package imported, line) for every import statement in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # import a.b.c of a module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, node.lineno))
    return found


def graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """module -> the modules of the package it imports."""
    found = modules(root, package)
    known = set(found)
    return {name: {target for target, _ in imports(name, path, known)} for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle per knot of modules that import each other (Tarjan's strongly connected parts),
    as the modules in import order, the first again at the end."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(_loop(min(part), set(part), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _loop(start: str, part: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest circle through ``start`` inside one strongly connected part, in import order."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                return paths[node] + [start]
            if nxt in part and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return sorted(part)


def main() -> int:
    found = cycles(graph())
    for part in found:
        print("import circle: " + " -> ".join(part))
    if not found:
        print(f"no import circle in {PACKAGE}/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    sys.exit(main())
