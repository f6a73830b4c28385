"""A recorded run's replay as the view replays it: ``raw_graph(..., replay=True)`` -> ``Trace``.

Every run is recorded by ``stockdemo.graph.recorder`` (the Playground's model, a training step,
a notebook model, a learner's code); its record's ``"replay"`` part holds what torch itself
said (each node's ``_sequence_nr``, a real ``backward()`` seen by a prehook on every node, the
leaves' ``.grad``, the error a second ``backward()`` raised: ``stockdemo.graph.backward``).
``trace_of_record`` says the same in the ``Trace`` fields the view's payload is built from
(``stockdemo.render.payload``):

- ``forward``: the op nodes in the order autograd created them (their ``seq``), each
  with its step (``step_of_frame``: the graph node's ``step``) and the line that made it;
- ``backward``: the engine's order, each node with the 2-norm of the gradients reaching it;
- ``param_grad_norms``: every leaf's ``.grad`` norm (named parameters and other leaves);
- ``forward_code``: the code panel: each function that made a node, whole (a line outside
  any function alone), in file order.

Pure: reads the record and, for the code panel's functions and indents, the source as
``linecache`` holds it (a notebook cell, a learner's file); a source it cannot find
leaves the lines the record names, unindented.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from stockdemo.graph import Graph
from stockdemo.graph.parse import parse
from stockdemo.replay.trace import PLAYGROUND_ROOT, BackwardStep, SourceLine, Trace

GetLines = Callable[[str], list[str]]
_PACKAGE = Path(__file__).resolve().parents[1]  # stockdemo/, in the checkout or installed


@lru_cache(maxsize=64)
def repo_file(path: str) -> str:
    """A file's name as the code panel prints it: stockdemo's own relative to the folder that holds
    the package ("stockdemo/model.py"), any other as given (a notebook's cell, "<your code>")."""
    if not Path(path).is_absolute():
        return path
    resolved = Path(path).resolve()
    if not resolved.is_relative_to(_PACKAGE):
        return path
    return resolved.relative_to(_PACKAGE.parent).as_posix()


def trace_of_record(raw: dict[str, Any], graph: Graph, root: str = PLAYGROUND_ROOT,
                    file_label: Callable[[str], str] = repo_file, getlines: GetLines | None = None) -> Trace:
    """The record's replay as a Trace over the graph's node ids.

    ``raw``: ``raw_graph(..., replay=True)``'s record; ``graph``: its Graph
    (``stockdemo.graph.ids.graph_of_record``: ``meta["code"]["ids"]`` names the record's
    nodes, and a node's ``step`` is its loop's iteration, or its time step in a tagged record).
    ``root``: what backward() ran from, in words. ``file_label``: a file's name as the view
    prints it (a notebook's "Cell In[3]"). ``getlines``: a file's lines
    (``linecache.getlines`` by default). Raises ValueError if the record has no replay.
    """
    if "replay" not in raw:
        raise ValueError("the record has no replay: record it with raw_graph(..., replay=True)")
    if getlines is None:
        import linecache

        getlines = linecache.getlines
    nodes, replay = raw["nodes"], raw["replay"]
    ids = graph.meta["code"]["ids"]
    lines = _Lines(raw, file_label, getlines)
    ops = sorted((i for i, n in enumerate(nodes) if n["seq"] is not None), key=lambda i: nodes[i]["seq"])
    source = {ids[i]: s for i in ops if (s := lines.of(nodes[i])) is not None}
    return Trace(
        root=root,
        forward=tuple(ids[i] for i in ops),
        backward=tuple(BackwardStep(ids[i], norm) for i, norm in replay["backward"]),
        param_grad_norms={ids[int(i)]: norm for i, norm in replay["leaf_norms"].items()},
        source=source,
        saved={ids[i]: (replay["saved"][i][0], replay["saved"][i][1]) for i in ops},
        second_backward_error=replay["second_error"] or "",
        forward_code=lines.code(),
        step_of_frame=tuple(graph.by_id[ids[i]].step for i in ops),
    )


class _Lines:
    """The record's source lines as ``SourceLine``s, each made once."""

    def __init__(self, raw: dict[str, Any], file_label: Callable[[str], str], getlines: GetLines) -> None:
        self.files: list[str] = raw["files"]
        self.texts: dict[str, str] = raw["texts"]
        self.label = file_label
        self.getlines = getlines
        self.made: dict[tuple[int, int], SourceLine] = {}
        self.functions: dict[int, list[tuple[int, int, str]]] = {}

    def of(self, node: dict[str, Any]) -> SourceLine | None:
        if node["file"] is None or node["line"] is None:
            return None
        return self.at(node["file"], node["line"])

    def at(self, f: int, line: int) -> SourceLine:
        found = self.made.get((f, line))
        if found is None:
            text = self._source(f)
            full = text[line - 1].rstrip("\n") if 0 < line <= len(text) else self.texts.get(f"{f}:{line}", "")
            found = self.made[f, line] = SourceLine(
                self.label(self.files[f]), line, self._function(f, line)[2], full.strip(),
                len(full) - len(full.lstrip()))
        return found

    def code(self) -> tuple[SourceLine, ...]:
        """Each function that made a node, whole; a line outside any function, alone."""
        wanted: set[tuple[int, int]] = set()
        for f, line in list(self.made):
            start, end, _ = self._function(f, line)
            wanted.update((f, k) for k in range(start, end + 1))
        return tuple(self.at(f, k) for f, k in sorted(wanted))

    def _source(self, f: int) -> list[str]:
        return self.getlines(self.files[f])

    def _function(self, f: int, line: int) -> tuple[int, int, str]:
        """(first line, last line, name) of the innermost function around ``line``."""
        if f not in self.functions:
            self.functions[f] = _functions("".join(self._source(f)))
        around = [fn for fn in self.functions[f] if fn[0] <= line <= fn[1]]
        return max(around) if around else (line, line, "<module>")  # the last to start is innermost


def _functions(source: str) -> list[tuple[int, int, str]]:
    """Every function in ``source``: (def line, last line, name), outer before inner."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[int, int, str]] = []
    todo = list(tree.body)
    while todo:  # statements only: a def is one, and expressions are most of a file's nodes
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.lineno, node.end_lineno or node.lineno, node.name))
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inside = getattr(node, field, None)
            if isinstance(inside, list):
                todo.extend(inside)
    return sorted(found)
