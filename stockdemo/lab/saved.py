"""What autograd keeps for backward, measured two ways that agree.

With ``torch.autograd.graph.saved_tensors_hooks`` while the forward runs
(``count_saved``), and by reading every node's ``_saved_*`` attributes
afterwards (``saved_in_graph``), which also sees what ``backward()`` freed.
Bytes are counted once per storage: the memory the graph keeps alive.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import torch
from torch import nn

from stockdemo.graph import POST as POST_ROLE
from stockdemo.graph import PRE as PRE_ROLE
from stockdemo.graph import STEP as STEP_ROLE
from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph
from stockdemo.graph.recorder import walk_grad_fns


class Saved(NamedTuple):
    """What a graph holds for backward. ``bytes`` counts each storage once."""

    nodes: int
    tensors: int
    bytes: int
    freed: int  # saved tensors backward() already released
    modified: int = 0  # saved tensors changed in place since: backward would refuse them


def saved_in_graph(output: torch.Tensor) -> Saved:
    """Walk every node behind ``output`` and read its saved tensors (``_saved_*``).

    A saved tensor that ``backward()`` freed, or that was changed in place
    since, raises on access with torch's reason; it is counted by that reason.
    """
    if output.grad_fn is None:
        return Saved(0, 0, 0, 0)
    order, _ = walk_grad_fns(output.grad_fn)
    storages: dict[int, int] = {}
    tensors = freed = modified = 0
    for fn in order:
        for name in _saved_names(type(fn)):
            try:
                value = getattr(fn, name)
            except RuntimeError as error:
                if "inplace operation" in str(error):
                    modified += 1
                else:
                    freed += 1
                continue
            for t in value if isinstance(value, tuple | list) else (value,):
                if isinstance(t, torch.Tensor):
                    tensors += 1
                    storage = t.untyped_storage()
                    storages[storage.data_ptr()] = storage.nbytes()
    return Saved(len(order), tensors, sum(storages.values()), freed, modified)


@lru_cache(maxsize=256)
def _saved_names(node_type: type) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of one kind of node (dir() per node was most of a walk)."""
    return tuple(name for name in dir(node_type) if name.startswith("_saved_"))


def count_saved(forward: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, Saved]:
    """Run ``forward`` with a hook on every tensor autograd saves -> (its output, the tally)."""
    storages: dict[int, int] = {}
    count = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal count
        count += 1
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = forward()
    nodes = len(walk_grad_fns(output.grad_fn)[0]) if output.grad_fn is not None else 0
    return output, Saved(nodes, count, sum(storages.values()), 0)


@dataclass(frozen=True)
class Snapshot:
    """One moment of an experiment: the graph behind a tensor, and what it holds."""

    label: str
    saved: Saved
    graph: Graph | None  # None where nothing is drawn


def snapshot(label: str, output: torch.Tensor, model: nn.Module | None = None,
             inputs: torch.Tensor | None = None, draw: bool = True) -> Snapshot:
    graph = capture_graph(output, model, inputs) if draw and output.grad_fn is not None else None
    return Snapshot(label, saved_in_graph(output), graph and restep(graph))


def restep(graph: Graph) -> Graph:
    """Split each batch's steps apart in a graph that spans several batches.

    ``capture_graph`` places steps from the stack of a layer's outputs; a
    batch whose only output kept is ``h_n`` has a stack of one, so all its
    steps land in one block. Every batch repeats the op sequence of one step
    of a fully placed batch: matched from the batch's end, those ops become
    its steps, the rest its set-up. Ids stay as captured.
    """
    ops = [n for n in graph.op_nodes if n.layer is not None]
    layers = sorted({n.layer for n in ops})
    template = None
    for layer in layers:
        first = [n.op for n in ops if n.layer == layer and n.role == STEP_ROLE and n.step == 1]
        if first:
            template = first
            break
    if template is None:
        return graph
    k = len(template)
    placed: dict[str, tuple[int | None, str]] = {}
    for layer in layers:
        body = [n for n in ops if n.layer == layer and n.role != POST_ROLE]
        names = [n.op for n in body]
        steps = 0
        while len(names) >= (steps + 1) * k and names[len(names) - (steps + 1) * k:
                                                      len(names) - steps * k] == template:
            steps += 1
        pre = len(body) - steps * k
        for i, n in enumerate(body):
            placed[n.id] = (None, PRE_ROLE) if i < pre else ((i - pre) // k, STEP_ROLE)
    nodes = tuple(n._replace(step=placed[n.id][0], role=placed[n.id][1]) if n.id in placed else n
                  for n in graph.nodes)
    steps_seen = [step for step, role in placed.values() if role == STEP_ROLE]
    meta = {**graph.meta, "seq_len": max(steps_seen, default=0) + 1}
    return Graph(nodes, graph.edges, meta)


