"""A run's graph as blocks of time steps x layers, and what a view draws of them.

``Blocks`` groups the nodes by (layer, role, step), read from each node's own fields.
``steps_to_draw`` prunes: a rolled view draws one step per layer; an unrolled view
past its node budget keeps the first and last steps and folds the middle into one box.
``aliases`` then says which drawn box stands for each node of the graph.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from operator import attrgetter
from typing import NamedTuple

from stockdemo.graph import STEP, Graph, Node


class Blocks:
    """A graph's nodes grouped as the layout reads them."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.ops: dict[tuple, list[Node]] = defaultdict(list)  # (layer, role, step) -> ops, in order
        self.params: dict[int | None, list[Node]] = defaultdict(list)  # layer -> its parameters
        self.special: dict[str, Node] = {}  # "input", "output"
        for n in graph.nodes:
            if n.kind == "op":
                self.ops[(n.layer, n.role, n.step)].append(n)
            elif n.kind == "parameter":
                self.params[n.layer].append(n)
            else:
                self.special[n.kind] = n
        self.layers = sorted({k[0] for k in self.ops if k[0] is not None})
        self.steps = {layer: sorted(k[2] for k in self.ops if k[0] == layer and k[1] == STEP)
                      for layer in self.layers}


class Drawn(NamedTuple):
    """Which steps a view draws: the pruning, before anything is placed."""

    shown: dict[int, list[int | None]]  # layer -> steps drawn, in order; None: the folded run
    hidden: dict[int, list[int]]  # layer -> steps folded away (unrolled past the budget)
    folded: int  # steps folded per layer
    first_step: dict[int | None, int]  # layer -> first step drawn


def steps_to_draw(blocks: Blocks, rolled: bool, max_nodes: int | None) -> Drawn:
    steps = blocks.steps
    folded = 0
    hidden: dict[int, list[int]] = {}
    if rolled:
        shown = {layer: [s[1] if len(s) > 1 else s[0]] for layer, s in steps.items() if s}
    else:
        shown = {layer: list(s) for layer, s in steps.items()}
        total = len(blocks.graph.nodes)
        if max_nodes is not None and total > max_nodes:
            shown, folded = _fold(blocks, max_nodes, total)
            for layer, s in shown.items():
                if None in s:
                    kept = set(s)
                    hidden[layer] = [t for t in steps[layer] if t not in kept]
    first_step = {layer: s[0] for layer, s in shown.items() if s}
    return Drawn(shown, hidden, folded, first_step)


def _fold(blocks: Blocks, max_nodes: int, total: int) -> tuple[dict[int, list[int | None]], int]:
    """Keep the first and last steps of each layer within the budget; None marks the fold."""
    steps, ops = blocks.steps, blocks.ops
    step_nodes = sum(len(ops[(layer, STEP, t)]) for layer, s in steps.items() for t in s)
    per_step = max(1, step_nodes // max(1, sum(len(s) for s in steps.values())))
    budget = max_nodes - (total - step_nodes)
    keep = max(1, budget // (2 * per_step * max(1, len(steps))))
    shown: dict[int, list[int | None]] = {}
    folded = 0
    for layer, s in steps.items():
        if len(s) <= 2 * keep + 1:
            shown[layer] = list(s)
        else:
            shown[layer] = [*s[:keep], None, *s[-keep:]]
            folded = len(s) - 2 * keep
    return shown, folded


def aliases(blocks: Blocks, drawn: Drawn, placed: Iterable[str], folds: dict[int, str],
            loops: dict[int, str], rolled: bool, complete: bool) -> dict[str, str]:
    """Every graph node id -> the id of the box that draws it: itself, a fold, or (rolled)
    the same op of the step shown.

    ``placed``: the ids of the boxes drawn; ``folds``, ``loops``: each layer's fold and
    loop marker. ``complete=False``: rolled-away steps the edges never reach are left out.
    """
    graph_ids = blocks.graph.by_id
    alias = {i: i for i in placed if i in graph_ids}
    for layer, hidden in drawn.hidden.items():
        fold = folds[layer]
        for t in hidden:
            for n in blocks.ops[(layer, STEP, t)]:
                alias[n.id] = fold
    if rolled:
        for layer, (shown,) in drawn.shown.items():
            _alias_other_steps(alias, blocks, layer, shown, loops[layer], complete)
    return alias


def _alias_other_steps(alias: dict[str, str], blocks: Blocks, layer: int, shown: int, loop_id: str,
                       complete: bool) -> None:
    """Rolled: every step's node is drawn as the same op (same name, same rank) of the step shown."""
    steps, ops = blocks.steps[layer], blocks.ops
    shown_block = ops[(layer, STEP, shown)]
    shown_ops, shown_ids = tuple(map(_OP, shown_block)), list(map(_ID, shown_block))
    counterpart: dict[tuple[str | None, int], str] | None = None
    for t in steps:
        if t == shown or not (complete or t in (shown - 1, shown - 2)):
            continue  # the edges reach back two steps at most: the recurrence
        block = ops[(layer, STEP, t)]
        if tuple(map(_OP, block)) == shown_ops:  # the usual step: the same ops, in order
            alias.update(zip(map(_ID, block), shown_ids, strict=True))
            continue
        if counterpart is None:
            counterpart = {key: n.id for key, n in _ranked(shown_block)}
        for key, n in _ranked(block):
            alias[n.id] = counterpart.get(key, loop_id)


_OP, _ID = attrgetter("op"), attrgetter("id")


def _ranked(block: list[Node]) -> Iterator[tuple[tuple[str | None, int], Node]]:
    """((op, its rank among this block's ops of that name), node), in creation order."""
    seen: dict[str | None, int] = {}
    for n in block:
        k = seen.get(n.op, 0)
        seen[n.op] = k + 1
        yield (n.op, k), n
