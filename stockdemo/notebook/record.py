"""One recorded run for the notebook widget: the model run once, its graph laid out, its replay.

Which graph, and which layout:

- a ``StockPredictor`` on ``(batch, seq_len, features)``: the app's own path, so the
  picture is the Playground's (``stockdemo.replay.model.trace_model``: ``capture_graph``'s ids,
  steps x layers laid out by ``stockdemo.layout.steps.layout``, the replay of that same run);
- any other model, or a function: the general record (``stockdemo.graph.recorder``), each node
  on the line of the caller's code that made it (a notebook cell's), with a real
  backward for the replay (``stockdemo.replay.record``), laid out by its code
  (``stockdemo.code.view.picture_of_record``: repeated iterations roll up, and a rolled
  box can be drawn unrolled, ``unrolled``);
- an output tensor (``show(output)``): its graph as recorded, with no lines (nothing was
  watching when it ran) and no replay (a backward would free the learner's graph).

The model's parameters keep the ``.grad`` they had: the replay's backward is undone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import nn

from stockdemo.code.view import drawing_of_record, draws_steps_and_layers, picture_of_record
from stockdemo.graph import Graph, shape_text
from stockdemo.graph.recorder import LineRecorder, is_callers_file, raw_graph
from stockdemo.layout.picture import Picture
from stockdemo.layout.steps import layout
from stockdemo.replay.model import trace_model
from stockdemo.replay.trace import Trace

_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclass(frozen=True)
class Run:
    """A run as the widget draws it: its picture (whose ``graph`` is the whole graph), its replay."""

    picture: Picture
    trace: Trace | None
    label: str  # the run in words: "StockPredictor(10×5×3)"
    record: dict[str, Any] | None = None  # the general record (graph.recorder's), laid out again to unroll
    unroll: frozenset[str] = frozenset()  # the rolled boxes drawn unrolled

    @property
    def graph(self) -> Graph:
        return self.picture.graph


def record(target: Any, *inputs: Any, view: str = "auto") -> Run:
    """``record(model, *inputs)`` runs ``model(*inputs)`` once; ``record(output)`` takes a tensor.

    ``view``: "auto", "rolled" or "unrolled" (``stockdemo.layout.steps``'s views). Raises
    TypeError for anything else, ValueError when nothing in the run needs a gradient.
    """
    if isinstance(target, torch.Tensor):
        if inputs:
            raise TypeError("show(output) takes the output alone; to run a model: show(model, *inputs)")
        return general_run(raw_graph(target), view, f"output {shape_text(tuple(target.shape))}")
    if not callable(target):
        raise TypeError("show() takes a model and its inputs, or an output tensor; "
                        f"got {type(target).__name__}")
    label = f"{getattr(target, '__name__', type(target).__name__)}({', '.join(map(_describe, inputs))})"
    with _one_thread(), _grads_kept(target):
        return _record_model(target, inputs, view, label)


def _record_model(target: Any, inputs: tuple, view: str, label: str) -> Run:
    if inputs and draws_steps_and_layers(target, inputs):
        graph, trace = trace_model(target, inputs[0])
        return Run(layout(graph, view, max_nodes=None), trace, label)
    lines = LineRecorder(is_callers=_callers)
    with torch.enable_grad(), lines:
        out = target(*inputs)
    params = dict(target.named_parameters()) if isinstance(target, nn.Module) else {}
    data = {"x": inputs[0]} if len(inputs) == 1 else {f"x{i}": x for i, x in enumerate(inputs, 1)}
    raw = raw_graph(_first_tensor(out), lines, params, replay=True, inputs=data)
    return general_run(raw, view, label)


def general_run(raw: dict[str, Any], view: str, label: str,
                file_label: Callable[[str], str] | None = None) -> Run:
    """A ``raw_graph`` record -> its Run: its picture by its code, and its replay if recorded."""
    picture, trace = drawing_of_record(raw, view, file_label=file_label or cell_name)
    return Run(picture, trace, label, raw)


def unrolled(run: Run, view: str, unroll: frozenset[str]) -> Run:
    """The same run with the rolled boxes ``unroll`` drawn unrolled (the graph and its ids stay)."""
    if run.record is None:
        return run  # a StockPredictor's picture has no such boxes
    return replace(run, picture=picture_of_record(run.record, view, unroll=unroll), unroll=unroll)


def cell_name(filename: str) -> str:
    """A notebook cell's file as IPython names it in tracebacks ("Cell In[3]"); other files as they are."""
    try:
        from IPython import get_ipython
    except ImportError:
        return filename
    shell = get_ipython()
    named = shell.compile.format_code_name(filename) if shell is not None else None
    return " ".join(named) if named else filename


def _callers(filename: str) -> bool:
    """The caller's code, not this package's (whose frame calls the model)."""
    return is_callers_file(filename) and not filename.startswith(_HERE)


def _first_tensor(out: Any) -> torch.Tensor:
    """The model's output, or the first tensor with a ``grad_fn`` in a tuple, list or dict of them."""
    if isinstance(out, torch.Tensor):
        return out
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    found = [v for v in values if isinstance(v, torch.Tensor)]
    return next((v for v in found if v.grad_fn is not None), found[0] if found else out)


def _describe(value: Any) -> str:
    return shape_text(tuple(value.shape)) if isinstance(value, torch.Tensor) else type(value).__name__


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one thread while the model runs: a notebook imports torch before stockdemo
    can set OMP_NUM_THREADS (stockdemo/__init__.py), and these small ops only pay for a team."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextmanager
def _grads_kept(model: Any) -> Iterator[None]:
    """Within: the module's parameters' ``.grad`` may change; after: each is the one it was."""
    params = list(model.parameters()) if isinstance(model, nn.Module) else []
    grads = [p.grad for p in params]
    for p in params:
        p.grad = None  # backward adds into a .grad in place: it gets fresh ones to fill
    try:
        yield
    finally:
        for p, grad in zip(params, grads, strict=True):
            p.grad = grad
