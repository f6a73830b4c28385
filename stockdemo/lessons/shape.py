"""A graph's shape as one key, for grouping a class's runs: same structure, same key.

Two students who wrote the same model on different lines, with other variable names and
comments, built the same autograd graph; the gallery shows them as one tile. The key
reads only what autograd recorded: each node's op, kind and tensor shape, and the edges.
Values, line numbers, file names, loop counters and parameter names are left out, and
so is the order of the record's nodes.

    shape_key(run.graph)               # '6f1c0a93b2e45d17': 16 hex digits
    difference(teacher.graph, run.graph).added_nodes    # what compare mode rings

The key hashes the graph as a Merkle tree does, in two passes over the edges: each node's
hash covers its own label and the hashes of its inputs (everything behind it), then a
second covers its consumers (everything it feeds). The key hashes every node's pair,
sorted, so node order cannot matter, and graphs that differ in an op, a shape, an edge or
a count of anything get two keys (barring a collision of 64-bit hashes). Each pass is
linear in the graph's size: a 2,400-node graph takes milliseconds, where rounds of
Weisfeiler-Lehman refinement would take one per step of depth.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from stockdemo.graph import Graph
from stockdemo.graph.diff import GraphDiff
from stockdemo.graph.ids import INPUT_PREFIX, OUTPUT_ID, graph_of_record
from stockdemo.lessons.record import Structure


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def shape_key(record: dict[str, Any] | None) -> str:
    """The structure of a run's graph (``graph.recorder.raw_graph``'s record) as 16 hex digits.

    Same ops, kinds, shapes, edges and data (parameters' shapes included, their names not):
    same key, whatever the code's text. None (no graph) -> "none".
    """
    if record is None:
        return "none"
    shape = _Hashed(record)
    return _hash(f"{record.get('output_shape')}|{sorted(zip(shape.behind, shape.ahead, strict=True))}")


class _Hashed(Structure):
    """Each node of a record, hashed with everything behind it and everything ahead of it."""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__(record)
        order = self.inputs_first()
        self.behind = self._passes(order, self.label, self.inputs, "<")
        self.ahead = self._passes(order[::-1], self.label, self.consumers, ">")
        self.ahead_bare = self._passes(order[::-1], self.bare, self.consumers, ">")

    @staticmethod
    def _passes(order: list[int], labels: list[str], linked: list[list[int]], way: str) -> list[str]:
        out = [""] * len(labels)
        for i in order:  # a node used twice by one op is linked twice, as in the record
            out[i] = _hash(f"{labels[i]}{way}{sorted(out[j] for j in linked[i])}")
        return out


def matching(reference: dict[str, Any], record: dict[str, Any]) -> dict[int, int]:
    """The nodes of ``reference`` that are there in ``record`` too: index -> index.

    By structure, never by text: first a node with the same place in the same surroundings
    (everything behind it and ahead of it alike), then the same past only (the nodes before
    an insertion), then the same future only, shapes aside (the nodes after it), then the
    inputs and consumers, op by op, of nodes already matched.
    """
    a, b = _Hashed(reference), _Hashed(record)
    match: dict[int, int] = {}
    taken: set[int] = set()
    ops_only = [i for i, links in enumerate(a.inputs) if links]  # leaves join by their consumers
    for key_a, key_b, among in (
            (list(zip(a.behind, a.ahead, strict=True)), list(zip(b.behind, b.ahead, strict=True)),
             range(len(a.label))),
            (a.behind, b.behind, ops_only),
            (list(zip(a.bare, a.ahead_bare, strict=True)), list(zip(b.bare, b.ahead_bare, strict=True)),
             ops_only)):
        free: dict[object, list[int]] = {}
        for j in sorted(range(len(b.label)), key=b.made.__getitem__):
            if j not in taken:
                free.setdefault(key_b[j], []).append(j)
        for i in sorted(among, key=a.made.__getitem__):
            if i not in match and free.get(key_a[i]):
                match[i] = free[key_a[i]].pop(0)
                taken.add(match[i])
    todo = list(match.items())
    while todo:  # neighbours of a matched pair, same op first with the same shape
        i, j = todo.pop()
        for near_a, near_b in ((a.inputs[i], b.inputs[j]), (a.consumers[i], b.consumers[j])):
            for x in near_a:
                if x in match:
                    continue
                free_b = [y for y in near_b if y not in taken and b.bare[y] == a.bare[x]]
                if free_b:
                    y = next((y for y in free_b if b.label[y] == a.label[x]), free_b[0])
                    match[x] = y
                    taken.add(y)
                    todo.append((x, y))
    return match


def _same_inputs(old: Graph, new: Graph, to_new: dict[str, str]) -> dict[str, str]:
    """The data both graphs take: by the script's name for it, else (renamed) by a node it
    enters in both."""
    def fed(graph: Graph, input_id: str, rename: Callable[[str], str | None] = str) -> set:
        return {rename(d) for s, d in graph.edges if s == input_id}

    olds = [i for i in old.by_id if i.startswith(INPUT_PREFIX)]
    news = [i for i in new.by_id if i.startswith(INPUT_PREFIX)]
    same = {i: i for i in olds if i in news}
    for i in olds:
        if i not in same:
            where = fed(old, i, to_new.get)
            j = next((j for j in news if j not in same.values() and where & fed(new, j)), None)
            if j is not None:
                same[i] = j
    return same


def difference(reference: dict[str, Any], record: dict[str, Any]) -> GraphDiff:
    """What ``record``'s graph added and removed against ``reference``'s (the teacher's run).

    Nodes are matched by structure (``matching``), so a run that built the same graph from
    other text has an empty difference. ``added_nodes`` and ``added_edges`` carry the ids
    of ``record``'s Graph (``graph.ids.graph_of_record``), ``removed_*`` those of the
    reference's; ``reshaped_nodes`` pairs a matched node whose tensor shape changed.
    """
    old, new = graph_of_record(reference), graph_of_record(record)
    old_ids, new_ids = old.meta["code"]["ids"], new.meta["code"]["ids"]
    to_new = {old_ids[i]: new_ids[j] for i, j in matching(reference, record).items()}
    to_new[OUTPUT_ID] = OUTPUT_ID
    to_new.update(_same_inputs(old, new, to_new))
    to_old = {v: k for k, v in to_new.items()}
    old_edges = {(to_new.get(s), to_new.get(d)) for s, d in old.edges}
    new_edges = {(to_old.get(s), to_old.get(d)) for s, d in new.edges}
    return GraphDiff(
        added_nodes=tuple(n for n in new.nodes if n.id not in to_old),
        removed_nodes=tuple(n for n in old.nodes if n.id not in to_new),
        added_edges=tuple(e for e in new.edges if e not in old_edges),
        removed_edges=tuple(e for e in old.edges if e not in new_edges),
        reshaped_nodes=tuple((n, new.by_id[to_new[n.id]]) for n in old.nodes
                             if n.id in to_new and new.by_id[to_new[n.id]].shape != n.shape),
    )
