"""A run's autograd graph as plain data (``Graph``), and its nodes counted and named.

Every run is recorded first (``stockdemo.graph.recorder``: the record, plain data), then made
a Graph (``stockdemo.graph.ids.graph_of_record``): one op node per ``grad_fn``, one parameter
node per ``AccumulateGrad``, plus the output and where data entered; in a record tagged with
its steps and layers (``stockdemo.graph.capture``), each node with the layer, time step and
role it belongs to. Edges point the way data flowed in the forward pass (producer ->
consumer); ``backward()`` walks them in reverse. ``NodeCounts`` is the one definition every
count the app prints reads.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import NamedTuple

INPUT_ID = "input"
OUTPUT_ID = "output"
FUSED_OP = "MkldnnRnnLayer"

# Block roles, in the order they appear along time.
PRE, STEP, POST, FUSED, HEAD = "pre", "step", "post", "fused", "head"


class Node(NamedTuple):
    id: str
    kind: str  # "input" | "parameter" | "op" | "output"
    label: str
    op: str | None = None  # autograd's own name, e.g. "AddmmBackward0"
    param: str | None = None  # e.g. "rnn.weight_hh_l0"
    shape: tuple[int, ...] | None = None
    layer: int | None = None
    step: int | None = None
    role: str | None = None  # pre | step | post | fused | head

    def to_dict(self) -> dict[str, object]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self._asdict().items()}


@dataclass(frozen=True)
class Graph:
    """An autograd graph as plain data. ``edges`` are (src id, dst id), forward direction."""

    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...]
    meta: dict[str, object] = field(default_factory=dict)

    @cached_property
    def by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def edge_set(self) -> frozenset[tuple[str, str]]:
        """The edges as a set (derived once: the Playground diffs every run against the last)."""
        return frozenset(self.edges)

    @cached_property
    def preds(self) -> dict[str, list[str]]:
        """Node id -> the ids feeding it (derived once; the graph is read-only)."""
        out: dict[str, list[str]] = defaultdict(list)
        for src, dst in self.edges:
            out[dst].append(src)
        return dict(out)

    @property
    def op_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "op"]

    @cached_property
    def counts(self) -> NodeCounts:
        """``count_nodes(self)``, computed once (pages read it on every rerun)."""
        return count_nodes(self)

    @cached_property
    def stats(self) -> dict[str, object]:
        """The counts as plain data (the JSON download), and the operations by type."""
        c = self.counts
        return {
            "nodes": c.nodes,
            "edges": c.edges,
            "ops": c.operations,
            "parameters": c.parameters,
            "inputs": c.inputs,
            "outputs": c.outputs,
            "counted": c.summary(),
            "ops_by_type": dict(Counter(op_name(n.op) for n in self.op_nodes).most_common()),
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "meta": self.meta,
            "stats": self.stats,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [list(e) for e in self.edges],
        }


# What each kind of node is called wherever a count is printed: (one, many).
KIND_WORDS = {
    "op": ("operation", "operations"),
    "parameter": ("parameter tensor", "parameter tensors"),
    "input": ("input", "inputs"),
    "output": ("output", "outputs"),
}


def count_text(n: int, kind: str) -> str:
    """(30, "op") -> '30 operations'; (1, "parameter") -> '1 parameter tensor'."""
    one, many = KIND_WORDS[kind]
    return f"{n:,} {one if n == 1 else many}"


@dataclass(frozen=True)
class NodeCounts:
    """A run's graph, counted: the one definition every count the app prints for a run reads.

    A node is one box of the unrolled graph view: an operation autograd
    recorded while ``forward`` ran (a ``grad_fn`` such as ``AddmmBackward0``),
    a parameter tensor (its ``AccumulateGrad``, where ``backward()`` leaves
    ``.grad``), the input ``x``, or the output. torch's own graph is the
    operations and the parameter tensors; the input and the output are drawn
    so the learner sees where data enters and leaves.
    """

    operations: int
    parameters: int
    inputs: int
    outputs: int
    edges: int

    @property
    def nodes(self) -> int:
        return self.operations + self.parameters + self.inputs + self.outputs

    def summary(self) -> str:
        """'38 nodes: 30 operations, 6 parameter tensors, the input and the output'."""
        listed = _listing([count_text(self.operations, "op"), *self._others()])
        return f"{self.nodes:,} node{'' if self.nodes == 1 else 's'}: {listed}"

    def besides_operations(self) -> str:
        """'the 6 parameter tensors, the input and the output': the nodes ``forward`` did not record."""
        return _listing([f"the {p}" if not p.startswith("the ") else p for p in self._others()])

    def _others(self) -> list[str]:
        parts = [count_text(self.parameters, "parameter")] if self.parameters else []
        for n, kind in ((self.inputs, "input"), (self.outputs, "output")):
            if n == 1:
                parts.append(f"the {kind}")
            elif n:
                parts.append(count_text(n, kind))
        return parts


def _listing(parts: list[str]) -> str:
    """['a', 'b', 'c'] -> 'a, b and c'."""
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" and {parts[-1]}"


def count_nodes(graph: Graph) -> NodeCounts:
    """How many nodes of each kind ``graph`` holds, and its edges (``Graph.counts`` keeps it)."""
    kinds = Counter(n.kind for n in graph.nodes)
    if set(kinds) - set(KIND_WORDS):
        raise ValueError(f"unknown node kinds: {sorted(set(kinds) - set(KIND_WORDS))}")
    return NodeCounts(kinds["op"], kinds["parameter"], kinds["input"], kinds["output"],
                      len(graph.edges))


def shape_text(shape: tuple[int, ...]) -> str:
    """(10, 1) -> '10×1'; () -> 'scalar'."""
    return "×".join(map(str, shape)) if shape else "scalar"


@lru_cache(maxsize=512)
def op_name(op: str | None) -> str:
    """'AddmmBackward0' -> 'Addmm'; 'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'."""
    if op is None:
        return ""
    name = op.rsplit("::", 1)[-1]
    return re.sub(r"Backward\d*$", "", name)
