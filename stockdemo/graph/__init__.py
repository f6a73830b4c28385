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

from stockdemo.i18n import N_, Message, Nn_, english, later, later_n
from stockdemo.i18n.deferred import Listing, later_list

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
            "counted": english(c.summary()),
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
    "op": Nn_("{n} operation", "{n} operations"),
    "parameter": Nn_("{n} parameter tensor", "{n} parameter tensors"),
    "input": Nn_("{n} input", "{n} inputs"),
    "output": Nn_("{n} output", "{n} outputs"),
}
# A kind with one node is named, not counted ("the input"); more, counted with "the".
THE_ONE = {"input": N_("the input"), "output": N_("the output")}
THE_COUNTED = {"parameter": Nn_("the {n} parameter tensor", "the {n} parameter tensors"),
               "input": Nn_("the {n} input", "the {n} inputs"),
               "output": Nn_("the {n} output", "the {n} outputs")}


def count_text(n: int, kind: str) -> Message:
    """(30, "op") -> '30 operations'; (1, "parameter") -> '1 parameter tensor' (said when shown)."""
    return later_n(*KIND_WORDS[kind], n)


@dataclass(frozen=True)
class NodeCounts:
    """A run's graph, counted: the one definition every count the app prints for a run reads.

    A node is one box of the unrolled graph view: an operation autograd
    recorded while ``forward`` ran (a ``grad_fn`` such as ``AddmmBackward0``),
    a parameter tensor (its ``AccumulateGrad``, where ``backward()`` leaves
    ``.grad``), the input ``x``, or the output. torch's own graph is the
    operations and the parameter tensors; the input and the output are drawn
    so the learner sees where data enters and leaves. Its words are Messages: a count is
    cached for every session, and said in each reader's language.
    """

    operations: int
    parameters: int
    inputs: int
    outputs: int
    edges: int

    @property
    def nodes(self) -> int:
        return self.operations + self.parameters + self.inputs + self.outputs

    def summary(self) -> Message:
        """'38 nodes: 30 operations, 6 parameter tensors, the input and the output'."""
        listed = later_list([count_text(self.operations, "op"), *self._others(the=False)])
        return later_n("{n} node: {listed}", "{n} nodes: {listed}", self.nodes, listed=listed)

    def besides_operations(self) -> Listing:
        """'the 6 parameter tensors, the input and the output': the nodes ``forward`` did not record."""
        return later_list(self._others(the=True))

    def _others(self, the: bool) -> list[Message]:
        parts = []
        for n, kind in ((self.parameters, "parameter"), (self.inputs, "input"), (self.outputs, "output")):
            if n == 1 and kind in THE_ONE:
                parts.append(later(THE_ONE[kind]))
            elif n:
                parts.append(later_n(*THE_COUNTED[kind], n) if the else count_text(n, kind))
        return parts


def count_nodes(graph: Graph) -> NodeCounts:
    """How many nodes of each kind ``graph`` holds, and its edges (``Graph.counts`` keeps it)."""
    kinds = Counter(n.kind for n in graph.nodes)
    if set(kinds) - set(KIND_WORDS):
        raise ValueError(f"unknown node kinds: {sorted(set(kinds) - set(KIND_WORDS))}")
    return NodeCounts(kinds["op"], kinds["parameter"], kinds["input"], kinds["output"],
                      len(graph.edges))


SCALAR = N_("scalar")
# Labels a run gives its nodes that are words (the rest, ops' and parameters' names, are code).
PREDICTIONS, LAST_STEP, FUSED_LABEL = N_("predictions"), N_("last step"), N_("fused LSTM\n(every step)")
OUTPUT_LABEL, LEAF_LABEL = N_("output"), N_("leaf")
LABEL_WORDS = frozenset((PREDICTIONS, LAST_STEP, FUSED_LABEL, OUTPUT_LABEL, LEAF_LABEL))
INPUT_LABEL = N_("input {name}")


def input_label(name: str) -> str:
    """The box of the data that entered as ``name``: 'input x' (its English, kept in the graph)."""
    return INPUT_LABEL.format(name=name)


def said_label(node: Node, label: str | None = None) -> str | Message:
    """``label`` (default: the node's own) as a reader reads it: words said in their language
    when shown, a name (an op, a parameter) as it is."""
    label = node.label if label is None else label
    if node.kind == "input" and label == input_label(label.removeprefix("input ")):
        return later(INPUT_LABEL, name=label.removeprefix("input "))
    return later(label) if label in LABEL_WORDS else label


def shape_text(shape: tuple[int, ...]) -> str:
    """(10, 1) -> '10×1'; () -> 'scalar' (in English: a download, a key; ``said_shape`` to show)."""
    return "×".join(map(str, shape)) if shape else SCALAR


def said_shape(shape: tuple[int, ...]) -> str | Message:
    """``shape_text``, its one word said when shown."""
    return "×".join(map(str, shape)) if shape else later(SCALAR)


@lru_cache(maxsize=512)
def op_name(op: str | None) -> str:
    """'AddmmBackward0' -> 'Addmm'; 'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'."""
    if op is None:
        return ""
    name = op.rsplit("::", 1)[-1]
    return re.sub(r"Backward\d*$", "", name)
