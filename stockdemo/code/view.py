"""From a run to what every view draws: its Picture and its Trace, assembled here and only here.

    picture, trace = drawing_of_record(raw)                # a record: the page, the notebook, the CLI
    picture = picture_of_record(raw)                       # the same, without building the replay
    if draws_steps_and_layers(model, inputs): ...          # StockPredictor, or anything else?
    picture = picture_of_run(output, model, lines, inputs=x)   # in this process (tests, benchmarks)
    raw, namespace = record_script(source)                 # a trusted script, in this process

A ``StockPredictor`` keeps the Playground's steps x layers layout (``stockdemo.layout.steps``);
anything else gets the general layout of its code (``stockdemo.layout.by_code``). Either way
``Graph.meta["code"]["lines"]`` says which line made each node, for the hover.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph_nodes
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.recorder import CODE_FILE, LineRecorder, raw_graph
from stockdemo.layout.by_code import layout_code
from stockdemo.layout.picture import Picture
from stockdemo.layout.steps import NODE_BUDGET, layout
from stockdemo.model import StockPredictor
from stockdemo.replay.record import GetLines, trace_of_record
from stockdemo.replay.trace import Trace


def drawing_of_record(raw: dict[str, Any], view: str = "auto", *, budget: int = NODE_BUDGET,
                      unroll: frozenset[str] = frozenset(), replay: bool = True,
                      file_label: Callable[[str], str] = str, getlines: GetLines | None = None
                      ) -> tuple[Picture, Trace | None]:
    """A run's record (``stockdemo.graph.recorder.raw_graph``) -> (its Picture, its Trace).

    The one assembly of a record into a drawing: the "Your code" page (``ui.caches``), the
    notebook widget (``notebook.record``) and the command line (``code.drawing``) call it.
    The picture is laid out by the code; the trace is None when the record has no replay
    (a graph a backward() freed) or ``replay`` is False. ``unroll``: ids of rolled boxes to
    draw unrolled (``CodePicture.folds``). ``file_label``, ``getlines``: how the replay's
    code panel names a file and reads its lines (``trace_of_record``).
    """
    graph = graph_of_record(raw)
    trace = trace_of_record(raw, graph, file_label=file_label, getlines=getlines) \
        if replay and "replay" in raw else None
    return layout_code(graph, view, budget, unroll), trace


def picture_of_record(raw: dict[str, Any], view: str = "auto", budget: int = NODE_BUDGET,
                      unroll: frozenset[str] = frozenset()) -> Picture:
    """``drawing_of_record``'s picture alone: no replay is built."""
    return drawing_of_record(raw, view, budget=budget, unroll=unroll, replay=False)[0]


def draws_steps_and_layers(model: object, inputs: tuple[object, ...]) -> bool:
    """The one "StockPredictor, or anything else?": a StockPredictor called on its input of
    (batch, seq_len, features) is drawn as the Playground draws it, steps x layers; any other
    model, or other inputs, by its code. ``inputs``: those the caller has (none: not drawn)."""
    return isinstance(model, StockPredictor) and len(inputs) <= 1 \
        and all(isinstance(x, torch.Tensor) and x.dim() == 3 for x in inputs)


def picture_of_run(output: torch.Tensor, model: nn.Module | None = None,
                   lines: LineRecorder | None = None, inputs: torch.Tensor | None = None,
                   view: str = "auto", unroll: frozenset[str] = frozenset()) -> Picture:
    """The picture of the run that made ``output``: steps x layers for a StockPredictor,
    the general layout for anything else.

    ``lines``: the recorder active while ``output`` was computed (None: no source lines).
    ``inputs`` (batch, seq_len, features): a StockPredictor's input, drawn as its node.
    """
    if draws_steps_and_layers(model, () if inputs is None else (inputs,)):
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
        return raw_graph(namespace[name], lines, params, inputs=namespace), namespace
    finally:
        linecache.cache.pop(filename, None)
