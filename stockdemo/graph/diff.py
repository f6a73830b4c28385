"""What changed from one run's graph to the next: nodes and edges by their stable ids.

Node ids are structural (layer, step, op and its rank), so the same node of two runs
has one id: ``graph_diff`` compares by id, and ``describe_diff`` says it in one
sentence for a learner.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from stockdemo.graph import Graph, Node, op_name


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


def describe_diff(diff: GraphDiff, before: dict[str, object], after: dict[str, object]) -> str:
    """One plain sentence for a learner: '+1 time step: +4 nodes: Tanh, Addmm, ...'."""
    changes = [
        f"{_signed(after[k] - before[k])} {label}{'s' if abs(after[k] - before[k]) != 1 else ''}"
        for k, label in (("seq_len", "time step"), ("num_layers", "layer"))
        if k in before and k in after and isinstance(after[k], int) and after[k] != before[k]
    ]
    changes += [
        f"{k.replace('_', ' ')} {before[k]} → {after[k]}"
        for k in ("hidden_size", "batch_size", "input_size", "cell", "seed")
        if k in before and k in after and after[k] != before[k]
    ]
    head = ", ".join(changes) if changes else "Same settings"
    if diff.is_empty:
        return f"{head}: the graph is identical (same nodes, edges and shapes)."
    parts = []
    for sign, nodes in (("+", diff.added_nodes), ("−", diff.removed_nodes)):
        if nodes:
            kinds = Counter(op_name(n.op) if n.kind == "op" else n.kind for n in nodes)
            listed = ", ".join(f"{name} ×{c}" if c > 1 else name for name, c in kinds.most_common(6))
            more = "…" if len(kinds) > 6 else ""
            parts.append(f"{sign}{len(nodes)} node{'s' if len(nodes) != 1 else ''} ({listed}{more})")
    edge_delta = len(diff.added_edges) - len(diff.removed_edges)
    if diff.added_edges or diff.removed_edges:
        parts.append(f"{_signed(edge_delta)} edges")
    if diff.reshaped_nodes and not (diff.added_nodes or diff.removed_nodes):
        parts.append(f"same structure, {len(diff.reshaped_nodes)} nodes with new tensor shapes")
    return f"{head}: " + "; ".join(parts) + "."


def _signed(n: int) -> str:
    return f"+{n}" if n >= 0 else f"−{-n}"
