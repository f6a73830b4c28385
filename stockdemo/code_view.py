"""One entry point from a run to its Picture, for the "Your code" page and the notebook widget.

    with LineRecorder() as lines:
        output = model(x)
    picture = picture_of_run(output, model, lines)       # in this process (a notebook)
    picture = picture_of_record(raw)                      # a record from the sandbox worker
    raw, namespace = record_script(source)                # a trusted script, in this process

A ``StockPredictor`` keeps the Playground's steps x layers layout (``stockdemo.layout``);
anything else gets the general layout of its code (``stockdemo.code_layout``). Either way
``Graph.meta["code"]["lines"]`` says which line made each node, for the hover.
"""

from __future__ import annotations

import linecache
from typing import Any

import torch
from torch import nn

from stockdemo.capture import capture_graph_nodes
from stockdemo.code_graph import CODE_FILE, LineRecorder, raw_graph
from stockdemo.code_ids import graph_of_record
from stockdemo.code_layout import layout_code
from stockdemo.graph import Graph
from stockdemo.layout import NODE_BUDGET, layout
from stockdemo.model import StockPredictor
from stockdemo.picture import Picture


def picture_of_record(raw: dict[str, Any], view: str = "auto", budget: int = NODE_BUDGET,
                      unroll: frozenset[str] = frozenset()) -> Picture:
    """A run's record (``stockdemo.code_graph.raw_graph``) laid out by its code.

    ``unroll``: ids of rolled boxes to draw unrolled (``CodePicture.folds``).
    """
    return layout_code(graph_of_record(raw), view, budget, unroll)


def picture_of_run(output: torch.Tensor, model: nn.Module | None = None,
                   lines: LineRecorder | None = None, inputs: torch.Tensor | None = None,
                   view: str = "auto", unroll: frozenset[str] = frozenset()) -> Picture:
    """The picture of the run that made ``output``: steps x layers for a StockPredictor,
    the general layout for anything else.

    ``lines``: the recorder active while ``output`` was computed (None: no source lines).
    ``inputs`` (batch, seq_len, features): a StockPredictor's input, drawn as its node.
    """
    if isinstance(model, StockPredictor):
        graph, grad_fns = capture_graph_nodes(output, model, inputs)
        if lines is not None:
            graph = _with_lines(graph, grad_fns, lines)
        return layout(graph, view, max_nodes=None)
    params = dict(model.named_parameters()) if model is not None else None
    return picture_of_record(raw_graph(output, lines, params), view, unroll=unroll)


def _with_lines(graph: Graph, grad_fns: dict[str, object], lines: LineRecorder) -> Graph:
    """The graph with ``meta["code"]``'s lines: each op node's line, read from the recorder."""
    files: dict[str, int] = {}
    texts: dict[str, str] = {}
    where: dict[str, list[int]] = {}
    for node_id, fn in grad_fns.items():
        seq = fn._sequence_nr()
        site = lines.site_of(seq) if graph.by_id[node_id].kind == "op" else None
        if site is None:
            continue
        filename, line, _, _ = site
        f = files.setdefault(filename, len(files))
        where[node_id] = [f, line]
        texts.setdefault(f"{f}:{line}", linecache.getline(filename, line).strip())
    code = {"files": list(files), "texts": texts, "lines": where}
    return Graph(graph.nodes, graph.edges, {**graph.meta, "code": code})


def record_script(source: str, filename: str = CODE_FILE, name: str = "predictions"
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a script like the seed's in this process, recorded -> (its record, its namespace).

    For trusted code only (tests, benchmarks, a notebook's own cells): the page runs a
    learner's code in the sandbox, never here. The graph is the one behind the tensor the
    script names ``name``; parameters are named by the script's modules.
    """
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    try:
        with LineRecorder() as lines:
            exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - trusted code only
        params: dict[str, torch.Tensor] = {}
        for value in namespace.values():
            if isinstance(value, nn.Module):
                for key, p in value.named_parameters():
                    params.setdefault(key, p)
        return raw_graph(namespace[name], lines, params), namespace
    finally:
        linecache.cache.pop(filename, None)
