"""A run's record read as a graph: the one place the lessons read the recorder's format.

Checks (``facts``) and the gallery's key (``shape``) read a record
(``stockdemo.graph.recorder.raw_graph``'s) only through ``Structure``, so a change of the
format touches this module alone. It reads structure only: each node's kind, op and tensor
shape, the edges, the output's shape, and where the data entered with the time steps it
took (``stockdemo.graph.data``). Lines, files, loops, values and names are never read: two
runs that built one graph read alike, whatever their code looks like.

    graph = Structure(run.graph)
    graph.ops()                 # Counter({"AddmmBackward0": 6, ...}): op nodes only
    graph.data_nodes()          # the nodes the data entered
    graph.steps_taken()         # {0, 1, 2, 3, 4}: the data's time steps in the graph
    graph.after(graph.recurrent())   # every node a recurrent node leads to
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]
FUSED_WORDS = ("rnn", "lstm", "gru")  # a fused recurrent op's name holds one (MkldnnRnnLayerBackward0)
MAX_REPEATED = 256  # kinds of repeated op a graph's recurrent part is looked for among, the commonest


@dataclass(frozen=True)
class Entry:
    """Data entering one node: the data's shape and the time steps it took (None: no time axis)."""

    shape: tuple[int, ...]
    steps: frozenset[int] | None

    @property
    def label(self) -> str:
        steps = "" if self.steps is None else f"@{sorted(self.steps)}"
        return f"data{list(self.shape)}{steps}"


def _entries(record: Record) -> dict[int, list[Entry]]:
    """Node index -> the data entering it (the record's ``inputs``; names left out)."""
    found: dict[int, list[Entry]] = {}
    for item in record.get("inputs", ()):
        per_node = item.get("steps")
        for k, node in enumerate(item["to"]):
            steps = None if per_node is None else frozenset(
                s for a, b in per_node[k] for s in range(a, b + 1))
            found.setdefault(node, []).append(Entry(tuple(item["shape"]), steps))
    return found


class Structure:
    """A record's nodes, edges and data, as the checks and the gallery's key read them."""

    def __init__(self, record: Record) -> None:
        nodes = record["nodes"]
        self.output_shape = record.get("output_shape")
        self.kinds = [n["kind"] for n in nodes]
        self.op = [n["op"] for n in nodes]
        self.shape = [n["shape"] for n in nodes]
        self.inputs: list[list[int]] = [[] for _ in nodes]  # in slot order, as the record has them
        self.consumers: list[list[int]] = [[] for _ in nodes]
        for src, dst in record["edges"]:
            self.inputs[dst].append(src)
            self.consumers[src].append(dst)
        self.data = _entries(record)
        self.bare = [f"{k}|{o}" for k, o in zip(self.kinds, self.op, strict=True)]
        self.label = [f"{b}|{s}" + "".join(sorted(f"|{e.label}" for e in self.data.get(i, ())))
                      for i, (b, s) in enumerate(zip(self.bare, self.shape, strict=True))]
        self.made = [(n["seq"] if n["seq"] is not None else -1, i) for i, n in enumerate(nodes)]

    def __len__(self) -> int:
        return len(self.op)

    def ops(self) -> Counter:
        """Autograd's op name -> how many nodes of it (parameters and leaves left out)."""
        return Counter(o for o, k in zip(self.op, self.kinds, strict=True) if k == "op")

    def op_nodes(self, op: str) -> set[int]:
        return {i for i, (o, k) in enumerate(zip(self.op, self.kinds, strict=True)) if k == "op" and o == op}

    def after(self, sources: set[int]) -> set[int]:
        """Every node a path leads to from one of ``sources`` (a source only if another leads to it)."""
        seen: set[int] = set()
        todo = [d for s in sources for d in self.consumers[s]]
        while todo:
            j = todo.pop()
            if j not in seen:
                seen.add(j)
                todo.extend(self.consumers[j])
        return seen

    def inputs_first(self) -> list[int]:
        """The nodes in an order where every node comes after its inputs (a node on a cycle,
        which no record holds, is left out)."""
        waiting = [len(i) for i in self.inputs]
        ready = [i for i, w in enumerate(waiting) if w == 0]
        order = []
        while ready:
            i = ready.pop()
            order.append(i)
            for j in self.consumers[i]:
                waiting[j] -= 1
                if waiting[j] == 0:
                    ready.append(j)
        return order

    def recurrent(self) -> set[int]:
        """The recurrent part: each op node with the same op and shape somewhere behind it (a
        loop's step, a stacked layer), and each fused recurrent node (nn.LSTM on CPU records
        one ``MkldnnRnnLayerBackward0`` per layer, its steps inside)."""
        keys = [f"{o}|{s}" if k == "op" else ""
                for o, s, k in zip(self.op, self.shape, self.kinds, strict=True)]
        repeated = [key for key, n in Counter(keys).most_common(MAX_REPEATED + 1) if key and n > 1]
        bits = {key: 1 << b for b, key in enumerate(repeated[:MAX_REPEATED])}
        behind = [0] * len(self)
        found = set()
        for i in self.inputs_first():
            bit = bits.get(keys[i], 0)
            if behind[i] & bit:
                found.add(i)
            for j in self.consumers[i]:
                behind[j] |= behind[i] | bit
        fused = {i for i in range(len(self)) if self.kinds[i] == "op"
                 and any(w in self.op[i].lower() for w in FUSED_WORDS)}
        return found | fused

    def data_nodes(self) -> set[int]:
        """The nodes the data entered (the script's named data, never a constant)."""
        return set(self.data)

    def timed_entries(self) -> list[Entry]:
        """Every entry of data that has a time axis (batch, steps, features)."""
        return [e for entries in self.data.values() for e in entries if e.steps is not None]

    def steps_taken(self) -> set[int]:
        """The data's time steps that entered the graph (each node of it leads to the output)."""
        return {s for e in self.timed_entries() for s in e.steps}
