"""Who imports whom in ``stockdemo/`` and in ``frontend/*/src``, read from the source; the circles
in it; and how long each hand-written module is.

    .venv/bin/python -m harness.import_graph     # prints each import circle, exits 1 if any

Python is read with ``ast``: every import counts, at the top of a module or inside a
function (a lazy import is still a dependency), under ``if TYPE_CHECKING`` too. ``from
package import name`` is an import of the module ``package.name`` when there is one, else
of ``package``; the package's own ``__init__`` is not counted as a dependency of its
submodules (Python runs it first, but a submodule does not use what it defines).

JavaScript: every ``import ... from "./x.js"`` and ``export ... from "./x.js"`` of a module
under ``frontend/*/src`` (the npm packages it imports are not ours; a built bundle has no
imports left).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from harness.helpers import ROOT

PACKAGE = "stockdemo"
# Hand-written Python: the package, the pages, what tests share, the deployment's scripts.
PYTHON = ("stockdemo/**/*.py", "pages/*.py", "app.py", "harness/*.py", "deploy/*.py")
# Hand-written JavaScript: the components' sources, the build scripts, and any other module
# that ships, less the bundles npm run build writes (they say so in their first line).
JAVASCRIPT = ("frontend/*/src/**/*.js", "frontend/*/*.mjs", "bench/**/*.mjs", "stockdemo/**/*.js",
              "static/*.js")
BUILT = "Do not edit: change frontend/"
JS_IMPORT = re.compile(r"""^[ \t]*(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.{1,2}/[^"']+\.js)["']"""
                       r"""|^[ \t]*import\s*["'](\.{1,2}/[^"']+\.js)["']""", re.M)


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


def js_modules(root: Path = ROOT) -> list[Path]:
    """Every module of the components' sources (``frontend/*/src``)."""
    return sorted(root.glob("frontend/*/src/**/*.js"))


def js_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module (its path from ``root``) -> the modules of ``frontend/*/src`` it imports."""
    edges = {}
    for path in js_modules(root):
        text = path.read_text(encoding="utf-8")
        targets = {(path.parent / (a or b)).resolve() for a, b in JS_IMPORT.findall(text)}
        edges[path.relative_to(root).as_posix()] = {t.relative_to(root.resolve()).as_posix()
                                                    for t in targets if t.exists()}
    return edges


def hand_written(root: Path = ROOT) -> list[Path]:
    """Every hand-written Python and JavaScript module (PYTHON, JAVASCRIPT, less what is BUILT)."""
    found = {p for pattern in PYTHON for p in root.glob(pattern)}
    for pattern in JAVASCRIPT:
        found |= {p for p in root.glob(pattern)
                  if "node_modules" not in p.parts and BUILT not in p.read_text(encoding="utf-8")[:300]}
    return sorted(found)


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def main() -> int:
    found = cycles(graph()) + cycles(js_graph())
    for part in found:
        print("import circle: " + " -> ".join(part))
    if not found:
        print(f"no import circle in {PACKAGE}/ nor frontend/*/src")
    return 1 if found else 0


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    sys.exit(main())
