"""Where the code looped: a code graph's nodes as nested blocks, one per loop iteration.

A node made inside a loop belongs to that iteration's block; a loop inside a loop gives
blocks inside blocks (layers x steps). A parameter (or another leaf) belongs to the
innermost block holding every node it feeds, so a weight shared by every step sits
beside the loop, once, not inside step 0.

Which way a loop's iterations go (``across``) follows what the Playground's steps x layers
mean: time steps share their weights, layers each take their own. A loop whose iterations
each use a weight no other iteration uses is layers, drawn down; so is a loop whose
iterations hold a loop drawn across (epochs or batches around time steps); any other loop
is time, drawn across, whatever loop the line itself hides (a cell's gates, seen as
repeats) or runs around it.

Each block has a *signature*: its ops and the edges among them, named relative to the
block (the same line, the same inner iterations, the same op and rank), with its inner
blocks' signatures. Consecutive iterations with one signature ran the same code the same
way: ``runs`` groups them, and a rolled picture draws such a run as its first iteration,
one box standing for the middle ones, and its last.

Reads ``Graph.meta["code"]`` (``stockdemo.graph.ids.graph_of_record``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from stockdemo.graph import Graph
from stockdemo.graph.ids import INPUT_PREFIX, line_key
from stockdemo.i18n import Message, later

Path = tuple[tuple[str, int], ...]  # ((loop, iteration), ...), outermost first
MIN_RUN = 3  # a run is rolled from this many iterations: first, the box, last


@dataclass
class Block:
    """The nodes of one loop iteration (or of the whole run, at the root)."""

    path: Path
    members: list[str] = field(default_factory=list)  # node ids directly in this block
    loops: dict[str, dict[int, Block]] = field(default_factory=dict)  # loop -> iteration -> block
    edges: list[tuple[str, str]] = field(default_factory=list)  # among items: member ids, loop keys
    signature: int = -1  # equal for blocks of equal structure (LoopBlocks._sign)

    def iterations(self, loop: str) -> list[int]:
        return sorted(self.loops[loop])


@dataclass(frozen=True)
class Run:
    """Consecutive iterations of one loop, in one parent block, with one signature."""

    fold_id: str  # the id of the box drawn for its middle iterations, when rolled
    loop: str  # "file:header line"
    parent: Path
    iterations: tuple[int, ...]

    @property
    def middle(self) -> tuple[int, ...]:
        """The iterations a rolled picture folds into one box (all but the first and last)."""
        return self.iterations[1:-1] if len(self.iterations) >= MIN_RUN else ()


class LoopBlocks:
    """A code graph's block tree, with each block's signature and each loop's runs."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        code = graph.meta["code"]
        self.texts: dict[str, str] = code["texts"]
        self.loop_names: dict[str, str] = code["loop_names"]
        self.hidden = set(code.get("hidden_loops", ()))  # loops torch ran inside one line
        loops = code["loops"]
        self.path: dict[str, Path] = {
            n.id: tuple((k, it) for k, it in loops.get(n.id, ())) for n in graph.nodes}
        self.feeds: dict[str, list[str]] = defaultdict(list)
        for src, dst in graph.edges:
            self.feeds[src].append(dst)
        self.leaves = {n.id for n in graph.nodes
                        if n.kind in ("parameter", "input") and self.feeds.get(n.id)}
        for n in graph.nodes:  # a leaf sits where every node it feeds is
            if n.id in self.leaves:
                self.path[n.id] = _common_prefix([self.path[d] for d in self.feeds[n.id]])
        self.root = Block(())
        self.block_of: dict[Path, Block] = {(): self.root}
        for n in graph.nodes:
            self._block(self.path[n.id]).members.append(n.id)
        self._names: dict[str, tuple] = {}
        self._signatures: dict[tuple, int] = {}
        self._own_edges()
        self._sign(self.root)
        self._weights_under = self._weights()
        self._across: dict[tuple[Path, str], bool] = {}
        self.runs: dict[tuple[Path, str], list[Run]] = {}
        self._bases: set[str] = set()
        for block in self.block_of.values():
            for loop in block.loops:
                self.runs[block.path, loop] = self._runs(block, loop)

    def _block(self, path: Path) -> Block:
        block = self.block_of.get(path)
        if block is None:
            parent = self._block(path[:-1])
            loop, it = path[-1]
            block = self.block_of[path] = Block(path)
            parent.loops.setdefault(loop, {})[it] = block
        return block

    def local(self, node_id: str, depth: int) -> tuple:
        """A node's name within its block at ``depth``: its id with the outer iterations cut."""
        name = self._names.get(node_id)
        if name is None:
            if node_id in self.leaves and self.path[node_id]:
                # a weight of one iteration (layer 3's): named by what it feeds, so layers match
                first = min(self.local(d, len(self.path[node_id])) for d in self.feeds[node_id])
                name = self._names[node_id] = ("leaf", repr(first), ())
            elif "@" not in node_id:
                name = self._names[node_id] = (node_id, "", ())
            else:
                head, _, tail = node_id.rpartition("/")
                its = tuple(it for _, it in self.path[node_id])
                name = self._names[node_id] = (head.partition("@")[0], tail, its)
        return name if not depth else (name[0], name[1], name[2][depth:])

    def _own_edges(self) -> None:
        """Each edge goes to the innermost block holding both ends, as an edge between items."""
        self.local_edges: dict[Path, list[tuple]] = defaultdict(list)
        path, local, block_of = self.path, self.local, self.block_of
        for src, dst in self.graph.edges:
            ps, pd = path[src], path[dst]
            if ps == pd:
                d = len(ps)
            else:
                d = 0
                while d < len(ps) and d < len(pd) and ps[d] == pd[d]:
                    d += 1
            block = block_of[ps[:d]]
            a = src if len(ps) == d else ps[d][0]
            b = dst if len(pd) == d else pd[d][0]
            if a != b:
                block.edges.append((a, b))
            self.local_edges[block.path].append((local(src, d), local(dst, d)))

    def _sign(self, block: Block) -> int:
        """The block's structure as a number: equal numbers, equal structure (exactly)."""
        depth = len(block.path)
        sig = (tuple(sorted(self.local(m, depth) for m in block.members)),
               tuple(sorted(self.local_edges.get(block.path, ()))),
               tuple((loop, tuple(self._sign(its[it]) for it in sorted(its)))
                     for loop, its in block.loops.items()))
        block.signature = self._signatures.setdefault(sig, len(self._signatures))
        return block.signature

    def _runs(self, block: Block, loop: str) -> list[Run]:
        its = block.iterations(loop)
        children = block.loops[loop]
        outer = ".".join(str(it) for _, it in block.path)
        base = f"fold/{line_key(self.texts.get(loop, loop))}"
        base += f"~{loop.rpartition('~')[2]}" if loop in self.hidden else ""
        base += f"@{outer}" if outer else ""
        while base in self._bases:
            base += "+"  # two loops with one header text in one block
        self._bases.add(base)
        runs: list[list[int]] = []
        for it in its:
            last = runs[-1][-1] if runs else None
            if last is not None and last + 1 == it \
                    and children[last].signature == children[it].signature:
                runs[-1].append(it)
            else:
                runs.append([it])
        return [Run(f"{base}/{k}", loop, block.path, tuple(r)) for k, r in enumerate(runs)]

    def _weights(self) -> dict[Path, set[str]]:
        """Each block's path -> the weights its nodes (and its inner blocks') use: every leaf
        but the script's data, which enters once and is no weight of a step or a layer."""
        under: dict[Path, set[str]] = defaultdict(set)
        for leaf in self.leaves:
            if leaf.startswith(INPUT_PREFIX):
                continue
            for dst in self.feeds[leaf]:
                path = self.path[dst]
                for k in range(len(path) + 1):
                    under[path[:k]].add(leaf)
        return under

    def layers(self, block: Block, loop: str) -> bool:
        """Whether each iteration of ``loop`` uses a weight that no other iteration uses."""
        children = block.loops[loop]
        if len(children) < 2:
            return False
        uses = [self._weights_under.get(child.path, set()) for child in children.values()]
        count: dict[str, int] = defaultdict(int)
        for weights in uses:
            for w in weights:
                count[w] += 1
        return all(any(count[w] == 1 for w in weights) for weights in uses)

    def across(self, block: Block, loop: str) -> bool:
        """Whether ``loop``'s iterations are drawn side by side (time), not stacked (layers,
        or iterations holding time steps themselves)."""
        known = self._across.get((block.path, loop))
        if known is None:
            inner = any(len(its) > 1 and self.across(child, name)
                        for child in block.loops[loop].values() for name, its in child.loops.items())
            known = self._across[block.path, loop] = not inner and not self.layers(block, loop)
        return known

    def loop_line(self, loop: str) -> str:
        """A loop's line number, as text: '12'."""
        return loop.rpartition(":")[2].partition("~")[0]

    def iteration_label(self, loop: str, it: int) -> str | Message:
        """A frame's caption: 't = 3', 'line 12, iteration 3', or 'line 12, repeat 3' for a
        loop torch ran inside the line (words said when shown)."""
        name = self.loop_names.get(loop)
        if name:
            return f"{name} = {it}"
        if loop in self.hidden:
            return later("line {line}, repeat {it}", line=self.loop_line(loop), it=str(it))
        return later("line {line}, iteration {it}", line=self.loop_line(loop), it=str(it))

    def span_label(self, loop: str, first: int, last: int) -> str | Message:
        """Iterations in words: 't = 1…198', 'line 12, iterations 1…198' (a while loop),
        'line 12, repeats 1…3' (a loop torch ran inside the line)."""
        name = self.loop_names.get(loop)
        if name:
            return f"{name} = {first}…{last}"
        span = f"{first}…{last}"
        if loop in self.hidden:
            return later("line {line}, repeats {span}", line=self.loop_line(loop), span=span)
        return later("line {line}, iterations {span}", line=self.loop_line(loop), span=span)

    def nodes_under(self, block: Block) -> list[str]:
        """Every node id in ``block`` and the blocks inside it."""
        out = list(block.members)
        for its in block.loops.values():
            for child in its.values():
                out += self.nodes_under(child)
        return out


def _common_prefix(paths: list[Path]) -> Path:
    first = min(paths, key=len)
    k = 0
    while k < len(first) and all(p[k] == first[k] for p in paths):
        k += 1
    return first[:k]
