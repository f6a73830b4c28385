"""What changed from one run's graph to the next: nodes and edges by their stable ids.

Node ids are structural (layer, step, op and its rank), so the same node of two runs
has one id: ``graph_diff`` compares by id, and ``describe_diff`` says it in one
sentence for a learner.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from stockdemo.graph import Graph, Node, op_name
from stockdemo.i18n import N_, Message, Nn_, later, later_n
from stockdemo.i18n.deferred import later_list


@dataclass(frozen=True)
class GraphDiff:
    added_nodes: tuple[Node, ...]
    removed_nodes: tuple[Node, ...]
    added_edges: tuple[tuple[str, str], ...]
    removed_edges: tuple[tuple[str, str], ...]
    reshaped_nodes: tuple[tuple[Node, Node], ...]  # same id, other tensor shape

    @property
    def is_empty(self) -> bool:
        return not (self.added_nodes or self.removed_nodes or self.added_edges
                    or self.removed_edges or self.reshaped_nodes)


def graph_diff(a: Graph, b: Graph) -> GraphDiff:
    """What changed from run ``a`` to run ``b``: nodes and edges by stable id."""
    a_nodes, b_nodes = a.by_id, b.by_id
    a_edges, b_edges = a.edge_set, b.edge_set
    return GraphDiff(
        added_nodes=tuple(n for n in b.nodes if n.id not in a_nodes),
        removed_nodes=tuple(n for n in a.nodes if n.id not in b_nodes),
        added_edges=tuple(e for e in b.edges if e not in a_edges),
        removed_edges=tuple(e for e in a.edges if e not in b_edges),
        reshaped_nodes=tuple(
            (a_nodes[n.id], n) for n in b.nodes
            if n.id in a_nodes and a_nodes[n.id].shape != n.shape
        ),
    )


# The settings a change names, besides T and the layers (counted): what each is called.
SETTING_WORDS = {"hidden_size": N_("hidden size"), "batch_size": N_("batch size"),
                 "input_size": N_("input size"), "cell": N_("cell"), "seed": N_("seed")}
COUNTED_SETTINGS = {"seq_len": Nn_("{d} time step", "{d} time steps"),
                    "num_layers": Nn_("{d} layer", "{d} layers")}


def describe_diff(diff: GraphDiff, before: dict[str, object], after: dict[str, object]) -> Message:
    """One plain sentence for a learner: '+1 time step: +4 nodes (Tanh, Addmm, ...)' (said when
    shown: a change is cached for every session moving between the same two settings)."""
    changes: list[object] = [
        later_n(*words, abs(after[k] - before[k]), d=_signed(after[k] - before[k]))
        for k, words in COUNTED_SETTINGS.items()
        if k in before and k in after and isinstance(after[k], int) and after[k] != before[k]
    ]
    changes += [
        later("{setting} {before} → {after}", setting=later(words), before=str(before[k]),
              after=str(after[k]))
        for k, words in SETTING_WORDS.items()
        if k in before and k in after and after[k] != before[k]
    ]
    head = later_list(changes) if changes else later("Same settings")
    if diff.is_empty:
        return later("{head}: the graph is identical (same nodes, edges and shapes).", head=head)
    parts = []
    for sign, nodes in (("+", diff.added_nodes), ("−", diff.removed_nodes)):
        if nodes:
            kinds = Counter(op_name(n.op) if n.kind == "op" else n.kind for n in nodes)
            listed = ", ".join(f"{name} ×{c}" if c > 1 else name for name, c in kinds.most_common(6))
            listed += "…" if len(kinds) > 6 else ""
            parts.append(later_n("{sign}{n} node ({listed})", "{sign}{n} nodes ({listed})", len(nodes),
                                 sign=sign, listed=listed))
    edge_delta = len(diff.added_edges) - len(diff.removed_edges)
    if diff.added_edges or diff.removed_edges:
        parts.append(later_n("{d} edge", "{d} edges", abs(edge_delta), d=_signed(edge_delta)))
    if diff.reshaped_nodes and not (diff.added_nodes or diff.removed_nodes):
        parts.append(later_n("same structure, {n} node with a new tensor shape",
                             "same structure, {n} nodes with new tensor shapes", len(diff.reshaped_nodes)))
    return later("{head}: {changes}.", head=head, changes=later_list(parts, semicolons=True))


def _signed(n: int) -> str:
    return f"+{n}" if n >= 0 else f"−{-n}"
