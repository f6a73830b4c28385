"""A graph's shape as one key, for grouping a class's runs: same structure, same key.

Two students who wrote the same model on different lines, with other variable names and
comments, built the same autograd graph; the gallery shows them as one tile. The key
reads only what autograd recorded: each node's op, kind and tensor shape, and the edges.
Values, line numbers, file names, loop counters and parameter names are left out, and
so is the order of the record's nodes.

    shape_key(run.graph)               # '6f1c0a93b2e45d17': 16 hex digits
    difference(teacher.graph, run.graph).added_nodes

The key is colour refinement (the Weisfeiler-Lehman test): every node starts with its own
label, then takes in the sorted labels of its inputs and of its consumers, round after
round, until no class of nodes splits further. Node order cannot matter, since nothing
reads an index. Different graphs can in principle share a key (WL does not tell every
pair of graphs apart), but not graphs that differ in an op, a shape, an edge or a count.
"""

from __future__ import annotations

import hashlib
from typing import Any

from stockdemo.code_ids import graph_of_record
from stockdemo.diff import GraphDiff, graph_diff

MAX_ROUNDS = 256  # a chain longer than this is told apart by its counts, not its depth


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def shape_key(record: dict[str, Any] | None) -> str:
    """The structure of a run's graph (``code_graph.raw_graph``'s record) as 16 hex digits.

    Same ops, kinds, shapes and edges (parameters' shapes included, their names not):
    same key, whatever the code's text. None (no graph) -> "none".
    """
    if record is None:
        return "none"
    nodes = record["nodes"]
    inputs: list[list[int]] = [[] for _ in nodes]
    consumers: list[list[int]] = [[] for _ in nodes]
    for src, dst in record["edges"]:
        inputs[dst].append(src)
        consumers[src].append(dst)
    # Node 0 is the output's grad_fn: marking it tells a graph from the same graph fed onward.
    labels = [_hash(f"{i == 0}|{n['kind']}|{n['op']}|{n['shape']}") for i, n in enumerate(nodes)]
    classes = len(set(labels))
    for _ in range(MAX_ROUNDS):
        labels = [_hash(f"{labels[i]}<{sorted(labels[j] for j in inputs[i])}"
                        f">{sorted(labels[j] for j in consumers[i])}") for i in range(len(nodes))]
        if len(set(labels)) == classes:
            break  # stable: another round splits no class, so it would add nothing
        classes = len(set(labels))
    return _hash(f"{record.get('output_shape')}|{sorted(labels)}")


def difference(reference: dict[str, Any], record: dict[str, Any]) -> GraphDiff:
    """What ``record``'s graph added and removed against ``reference``'s (the teacher's run),
    by the stable node ids of ``code_ids``: ``.added_nodes``, ``.removed_nodes``, as compare
    mode rings them."""
    return graph_diff(graph_of_record(reference), graph_of_record(record))
