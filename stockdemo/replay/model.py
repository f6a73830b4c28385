"""Replay a run: the order autograd wrote its graph down, and the order backward() walked it.

``trace_run(config)`` runs the config again (same seed, so the same graph ids
as ``live.run(config).graph``) and records, from torch itself:

- **forward**: the op nodes in the order autograd created them
  (``grad_fn._sequence_nr()``), each with the line of ``forward`` that ran
  when it was made, and the loop's time step;
- **backward**: ``output.sum().backward()`` with a prehook on every node
  (``Node.register_prehook``): the engine's real execution order, and the
  2-norm of all the gradients reaching each node together;
- what autograd saved for each node, the parameters' ``.grad`` norms, and the
  error a second ``backward()`` raises once the graph is freed.

Which line made a node: torch's anomaly mode answers that by storing a
formatted stack trace on every node (``metadata["traceback_"]``), which costs
seconds on a large graph (the deeper the caller's stack, the slower) and is a
process-wide switch, so concurrent sessions would pay for it and race to turn it
off. A ``TorchFunctionMode`` sees every torch call made from Python, on this
thread only: a call's nodes are the ones created between its start and its
return, which sequence numbers tell (they count up, one per node, per thread).
tests/test_replay.py checks the two agree, node for node.
"""

from __future__ import annotations

import copy
import gc
import inspect
import linecache
import math
import os
from functools import lru_cache
from pathlib import Path

import torch
from torch import nn

from stockdemo.config import TRAIN_BATCH_SIZE, RunConfig, TrainConfig
from stockdemo.graph import STEP, Graph
from stockdemo.graph.capture import capture_graph_nodes
from stockdemo.graph.recorder import LineRecorder, saved_on
from stockdemo.live import run as live
from stockdemo.model import LoopRNN, StockPredictor
from stockdemo.replay.trace import PLAYGROUND_ROOT, TRAINING_ROOT, BackwardStep, SourceLine, Trace
from stockdemo.train.windows import Dataset

# "Our code": the model (stockdemo/model.py) and the loss this replay computes (here).
_HERE = os.path.dirname(os.path.abspath(__file__))
OUR_DIRS = (os.path.dirname(_HERE), _HERE)
REPO_ROOT = Path(OUR_DIRS[0]).parent

def trace_run(config: RunConfig) -> Trace:
    """Run ``config`` again and replay it: forward creation order, backward of ``output.sum()``."""
    x, model = live.build(config)  # x: (batch, seq_len, features)
    return trace_model(model, x)[1]


def trace_model(model: StockPredictor, x: torch.Tensor) -> tuple[Graph, Trace]:
    """Run ``model`` once on ``x`` and replay that run -> (its graph, as ``capture_graph`` ids it;
    the Trace). x: (batch, seq_len, features). The backward leaves ``.grad`` on the parameters."""
    sites = _CallSites()
    with torch.enable_grad(), sites:
        output = model(x)  # (batch, 1)
    graph, grad_fns = capture_graph_nodes(output, model, x)
    with torch.enable_grad():
        root = output.sum()
    return graph, _replay(graph, grad_fns, sites, root, PLAYGROUND_ROOT, model)


def trace_training_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Trace:
    """Replay one training step: the MSE loss's graph, and its ``backward()``.

    x: (batch, seq_len, features), y: (batch, 1). Node ids are those of
    ``train.training_step_graph(model, x, y)``. The model is copied first, so
    its parameters' ``.grad`` stay as they were.
    """
    model = copy.deepcopy(model)
    model.zero_grad(set_to_none=True)
    sites = _CallSites()
    with torch.enable_grad(), sites:
        loss = nn.functional.mse_loss(model(x), y)  # () scalar
    graph, grad_fns = capture_graph_nodes(loss, model, x)
    return _replay(graph, grad_fns, sites, loss, TRAINING_ROOT, model)


def trace_first_training_step(dataset: Dataset, config: TrainConfig) -> Trace:
    """Replay the first step of ``train.train(dataset, config)``: its model as built, its first batch.

    The graph has the ids of that run's ``TrainResult.step_graph`` (same model,
    same batch size); the gradients are the ones the first step really had.
    """
    _, model = live.build(config.model_config)  # as train() builds it: seeded
    shuffle = torch.Generator().manual_seed(config.seed)  # train()'s batch order
    train = dataset.part("train")
    first = torch.randperm(len(dataset.x[train]), generator=shuffle)[:TRAIN_BATCH_SIZE]
    x = torch.from_numpy(dataset.x[train])[first]  # (batch, seq_len, features)
    y = torch.from_numpy(dataset.y[train]).unsqueeze(1)[first]  # (batch, 1)
    return trace_training_step(model, x, y)


def forward_code(model: nn.Module) -> tuple[SourceLine, ...]:
    """The lines of ``StockPredictor.forward``, then ``LoopRNN.forward`` for a loop cell."""
    functions = [StockPredictor.forward]
    if isinstance(getattr(model, "rnn", None), LoopRNN):
        functions.append(LoopRNN.forward)
    lines = []
    for fn in functions:
        code, first = inspect.getsourcelines(fn)
        path = _relative(inspect.getsourcefile(fn) or "")
        for k, text in enumerate(code):
            body = text.rstrip("\n")
            lines.append(SourceLine(path, first + k, fn.__name__, body.strip(),
                                    len(body) - len(body.lstrip())))
    return tuple(lines)


class _CallSites(LineRecorder):
    """For each torch call made from Python that created graph nodes: where in stockdemo/ it ran."""

    def __init__(self) -> None:
        super().__init__(lambda filename: os.path.dirname(filename) in OUR_DIRS, loops=False)
        self._lines: dict[tuple[str, int], SourceLine] = {}

    def line_of(self, sequence_nr: int) -> SourceLine | None:
        """The forward line that ran when the node numbered ``sequence_nr`` was created."""
        site = self.site_of(sequence_nr)
        if site is None:
            return None
        path, line, function, _ = site
        found = self._lines.get((path, line))
        if found is None:
            text = linecache.getline(path, line).rstrip("\n")
            found = self._lines[path, line] = SourceLine(_relative(path), line, function, text.strip(),
                                                         len(text) - len(text.lstrip()))
        return found


def _replay(graph: Graph, grad_fns: dict[str, object], sites: _CallSites, root: torch.Tensor,
            root_name: str, model: nn.Module) -> Trace:
    # Hooks, handles and gradients are many small acyclic objects: a collection
    # triggered among them would scan the whole heap for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _replay_without_gc(graph, grad_fns, sites, root, root_name, model)
    finally:
        if gc_was_enabled:
            gc.enable()


def _replay_without_gc(graph: Graph, grad_fns: dict[str, object], sites: _CallSites,
                       root: torch.Tensor, root_name: str, model: nn.Module) -> Trace:
    ops = [n for n in graph.nodes if n.kind == "op"]
    sequence = {n.id: grad_fns[n.id]._sequence_nr() for n in ops}
    forward = tuple(sorted(sequence, key=sequence.__getitem__))
    step = {n.id: n.step if n.role == STEP else None for n in ops}
    source = {}
    for node_id in forward:
        line = sites.line_of(sequence[node_id])
        if line is not None:
            source[node_id] = line
    saved = {node_id: saved_on(grad_fns[node_id]) for node_id in forward}  # before backward frees them

    backward: list[BackwardStep] = []
    handles = [grad_fns[node_id].register_prehook(_recorder(node_id, backward)) for node_id in forward]
    try:
        root.backward()
    finally:
        for handle in handles:
            handle.remove()
    param_grad_norms = {}
    for n in graph.nodes:
        if n.kind == "parameter" and n.param is not None:
            grad = model.get_parameter(n.param).grad
            if grad is not None:
                param_grad_norms[n.id] = float(torch.linalg.vector_norm(grad))
    try:
        root.backward()  # the graph was freed by the first: torch says so
        error = ""
    except RuntimeError as e:
        error = str(e)
    code = forward_code(model)
    shown = {(c.file, c.line) for c in code}
    # A line outside the model (the training step's loss) joins the panel, after the model's code.
    code += tuple(sorted({s for s in source.values() if (s.file, s.line) not in shown},
                         key=lambda s: (s.file, s.line)))
    return Trace(root_name, forward, tuple(backward), param_grad_norms, source, saved, error,
                 code, tuple(step[i] for i in forward))


def _recorder(node_id: str, steps: list[BackwardStep]):
    """A prehook noting ``node_id`` and the 2-norm of all its incoming gradients together."""
    def prehook(grad_outputs):
        squares = sum(float(torch.linalg.vector_norm(g)) ** 2 for g in grad_outputs if g is not None)
        steps.append(BackwardStep(node_id, math.sqrt(squares)))
    return prehook


@lru_cache(maxsize=64)
def _relative(path: str) -> str:
    """``path`` relative to the repo root (posix slashes) when inside it, else as given."""
    try:
        return Path(path).resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    except ValueError:
        return path
