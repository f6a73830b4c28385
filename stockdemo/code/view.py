"""From a run's record to what every view draws: its Picture and its Trace, assembled here and only here.

    picture, trace = drawing_of_record(raw)                # any record: every page, the notebook, the CLI
    picture = picture_of_record(raw)                       # the same, without building the replay
    picture, trace = drawing_of_run(config)                # a Playground config, run again with its replay
    raw, namespace = record_script(source)                 # a trusted script, in this process

A record tagged with steps and layers (``stockdemo.graph.capture``: the Playground's model) is
drawn as time steps x layers, any other by its code (``stockdemo.layout.views``, the one
choice). Either way ``Graph.meta["code"]["lines"]`` says which line made each node, for the
hover, when the run was recorded with its lines.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from stockdemo.config import RunConfig
from stockdemo.graph.ids import graph_of_record
from stockdemo.graph.lines import LineRecorder
from stockdemo.graph.recorder import CODE_FILE, raw_graph
from stockdemo.layout.picture import Picture
from stockdemo.layout.steps import NODE_BUDGET
from stockdemo.layout.views import picture_of_graph
from stockdemo.live.run import recorded
from stockdemo.replay.record import GetLines, repo_file, trace_of_record
from stockdemo.replay.trace import PLAYGROUND_ROOT, Trace


def drawing_of_record(raw: dict[str, Any], view: str = "auto", *, budget: int = NODE_BUDGET,
                      unroll: frozenset[str] = frozenset(), replay: bool = True,
                      root: str = PLAYGROUND_ROOT, file_label: Callable[[str], str] = repo_file,
                      getlines: GetLines | None = None) -> tuple[Picture, Trace | None]:
    """A run's record (``stockdemo.graph.recorder.raw_graph``) -> (its Picture, its Trace).

    The one assembly of a record into a drawing: the Playground's replay (``drawing_of_run``),
    a training step's, the "Your code" page (``ui.caches``), the notebook widget
    (``notebook.record``) and the command line (``code.drawing``, ``__main__``) call it. The
    trace is None when the record has no replay (a graph a backward() freed) or ``replay`` is
    False. ``budget``, ``unroll``: a code graph's "auto" size and rolled boxes drawn unrolled
    (``CodePicture.folds``). ``root``, ``file_label``, ``getlines``: what backward() ran from,
    and how the replay's code panel names a file and reads its lines (``trace_of_record``).
    """
    graph = graph_of_record(raw)
    trace = trace_of_record(raw, graph, root, file_label=file_label, getlines=getlines) \
        if replay and "replay" in raw else None
    return picture_of_graph(graph, view, budget=budget, unroll=unroll), trace


def picture_of_record(raw: dict[str, Any], view: str = "auto", budget: int = NODE_BUDGET,
                      unroll: frozenset[str] = frozenset()) -> Picture:
    """``drawing_of_record``'s picture alone: no replay is built."""
    return drawing_of_record(raw, view, budget=budget, unroll=unroll, replay=False)[0]


def drawing_of_run(config: RunConfig, view: str = "auto") -> tuple[Picture, Trace]:
    """The Playground's run of ``config``, run again (same seed, so the same ids as
    ``live.run.run(config).graph``) with each node's line and a real backward: its picture, with
    the lines for the hover, and its replay."""
    picture, trace = drawing_of_record(recorded(config, replay=True), view)
    assert trace is not None  # recorded with its replay
    return picture, trace


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
