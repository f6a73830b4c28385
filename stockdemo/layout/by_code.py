"""A layered layout for any code graph: positions on the server, as for the Playground.

Learners' code and notebook models have no steps x layers shape, so the picture follows
the code instead (``stockdemo.layout.loops``):

- inside a block, data flows down: igraph's Sugiyama layout (``Graph.layout_sugiyama``)
  gives each node its row and its order in the row; a loop inside the block is one item
  of that layout, as big as its iterations need;
- a loop's iterations are blocks side by side, each in a frame ("t = 3"), so time reads
  across; layers (iterations each with weights of their own) and a loop whose iterations
  hold time steps stack down instead (``LoopBlocks.across``: layers x steps);
- a parameter shared by every iteration is drawn once, beside the loop, wired to the
  first iteration that uses it (as ``stockdemo.layout.steps`` wires a weight to step 0);
- rolled (past ``budget`` nodes, or asked): a run of iterations with one signature is
  drawn as its first iteration, one box standing for the middle ones with their exact
  count, and its last. ``unroll`` names the boxes to draw unrolled anyway (a click).

Identical blocks share one Sugiyama arrangement, so a loop of 5,000 steps costs one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

import igraph

from stockdemo import theme
from stockdemo.graph import Graph, Node, op_name, said_label
from stockdemo.heap import collector_paused
from stockdemo.i18n import Message, english, later_n, tr
from stockdemo.layout import picture as pictures
from stockdemo.layout.loops import Block, LoopBlocks, Path
from stockdemo.layout.picture import INCH, Frame, Picture, PlacedEdge, PlacedNode, Words, box_size
from stockdemo.layout.steps import BLOCK_GAP, CAPTION_H, COL, MARGIN, NODE_BUDGET, short_param

H_GAP = 0.2 * INCH  # between boxes in a row
V_GAP = 0.3 * INCH  # between rows
PAD = 0.12 * INCH  # inside an iteration's frame
CAPTION_CHAR_W = 6.0  # a frame caption's mean advance (the view draws them at 11 px)


@dataclass(frozen=True)
class Fold:
    """What a rolled box stands for: the middle iterations of a run of identical ones."""

    loop: str  # "file:header line" (stockdemo.layout.loops)
    span: Words  # the iterations in words: "t = 1…198", "line 12, repeats 1…3"
    header: str  # the loop's line of code
    parent: Path  # the iterations of the loops around it
    iterations: tuple[int, ...]  # the iterations the box stands for, in order
    nodes: int  # graph nodes in them

    def text(self) -> Message:
        """'792 nodes of 198 iterations of 'for t in range(T):', t = 1…198, each like the
        ones drawn beside it'."""
        iterations = later_n("{n} iteration", "{n} iterations", len(self.iterations))
        return later_n("{n} node of {iterations} of {header}, {span}, each like the ones drawn beside it",
                       "{n} nodes of {iterations} of {header}, {span}, each like the ones drawn beside it",
                       self.nodes, iterations=iterations, header=repr(self.header), span=self.span)


@dataclass(frozen=True)
class CodePicture(Picture):
    """A ``Picture`` of a code graph; ``folds``: each rolled box's id -> what it stands for;
    ``unrolled``: the folds drawn unrolled on request (``layout_code``'s ``unroll``)."""

    folds: dict[str, Fold]
    unrolled: tuple[str, ...] = ()

    @cached_property
    def stands_for(self) -> dict[str, Words]:
        return {fold_id: fold.text() for fold_id, fold in self.folds.items()}

    def describe(self, node_id: str, markdown: bool = False) -> str:
        """'a3f9c1@3/Addmm0 (Addmm, line 15: h = cell(x[:, t], h), t = 3)'."""
        node = self.graph.by_id[node_id]
        code = self.graph.meta["code"]
        where = [op_name(node.op) if node.kind == "op" else str(said_label(node))]
        line = code["lines"].get(node_id)
        if line is not None:
            where.append(tr("line {line}: {text}", line=str(line[1]),
                            text=code["texts"].get(f"{line[0]}:{line[1]}", "")))
        names = code["loop_names"]
        where += [f"{names.get(loop) or tr('iteration')} = {it}"
                  for loop, it in code["loops"].get(node_id, ())]
        box = self.stands_for.get(self.drawn_as.get(node_id, node_id))
        return pictures.named_node(node_id, where, box, True, markdown)


class _Shape:
    """A laid-out block: its size, and its boxes and frames relative to its top-left corner."""

    __slots__ = ("w", "h", "boxes", "frames")

    def __init__(self, w: float, h: float, boxes: list, frames: list) -> None:
        self.w, self.h = w, h
        self.boxes = boxes  # (drawn id, centre x, centre y)
        self.frames = frames  # (label, x, y, w, h)

    def moved(self, dx: float, dy: float) -> tuple[list, list]:
        return ([(i, x + dx, y + dy) for i, x, y in self.boxes],
                [(label, x + dx, y + dy, w, h) for label, x, y, w, h in self.frames])


def layout_code(graph: Graph, view: str = "auto", budget: int = NODE_BUDGET,
                unroll: frozenset[str] = frozenset()) -> CodePicture:
    """Place every node of a code graph (``stockdemo.graph.ids.graph_of_record``), in points, y down.

    ``view``: "unrolled" (every node), "rolled" (runs of identical iterations folded), or
    "auto" (unrolled up to ``budget`` nodes). ``unroll``: fold ids drawn unrolled anyway.
    """
    if view not in ("auto", "rolled", "unrolled"):
        raise ValueError(f"view must be auto, rolled or unrolled, got {view!r}")
    rolled = view == "rolled" or (view == "auto" and len(graph.nodes) > budget)
    with collector_paused():
        return _Layout(LoopBlocks(graph), rolled, unroll).picture()


class _Layout:
    def __init__(self, blocks: LoopBlocks, rolled: bool, unroll: frozenset[str]) -> None:
        self.blocks = blocks
        self.graph = blocks.graph
        self.rolled = rolled
        self.unroll = unroll
        self.by_id = self.graph.by_id
        self.folds: dict[str, Fold] = {}
        self.unrolled: list[str] = []
        self.fold_boxes: dict[str, tuple[Words, float, float]] = {}  # fold id -> its text, w, h
        self._boxes: dict[tuple, tuple[Words, float, float]] = {}
        self._arrangements: dict[int, dict[tuple, tuple[int, float]]] = {}
        self._params_in = {e[1]: e[0] for e in self.graph.edges
                           if self.by_id[e[0]].kind == "parameter"}

    # -- what a box says ----------------------------------------------------------------
    def box(self, node_id: str) -> tuple[Words, float, float]:
        """(text, width, height): the label, a transpose naming its weight, the shape below."""
        n = self.by_id[node_id]
        param = self._params_in.get(node_id) if n.label == "T" else None
        key = (n.label, n.shape, param)
        hit = self._boxes.get(key)
        if hit is None:  # one per distinct text: a loop repeats the same few
            own = n.label if param is None else f"{short_param(param.removeprefix('param/'))}.T"
            label = pictures.box_text(n, own)
            hit = self._boxes[key] = (label, *box_size(label))
        return hit

    # -- blocks, loops, iterations --------------------------------------------------------
    def block(self, block: Block) -> _Shape:
        """A block's members and loops in rows, data flowing down."""
        items: list[str] = [*block.members, *block.loops]
        shapes: dict[str, _Shape] = {loop: self.loop(block, loop) for loop in block.loops}
        size = {i: (shapes[i].w, shapes[i].h) if i in shapes else self.box(i)[1:] for i in items}
        where = self._arrangement(block, items)
        rows: dict[int, list[str]] = defaultdict(list)
        for i in sorted(items, key=lambda i: where[i][1]):
            rows[where[i][0]].append(i)
        unit = COL + H_GAP
        boxes: list = []
        frames: list = []
        top = 0.0
        width = 0.0
        min_left = 0.0
        for r in sorted(rows):
            row = rows[r]
            height = max(size[i][1] for i in row)
            right = float("-inf")
            for i in row:
                w, h = size[i]
                left = max(where[i][1] * unit - w / 2, right + H_GAP)
                right = left + w
                min_left = min(min_left, left)
                if i in shapes:
                    b, f = shapes[i].moved(left, top)
                    boxes += b
                    frames += f
                else:
                    boxes.append((i, left + w / 2, top + height / 2))
                width = max(width, right)
            top += height + V_GAP
        shape = _Shape(width - min_left, max(0.0, top - V_GAP), boxes, frames)
        if min_left:
            shape.boxes, shape.frames = shape.moved(-min_left, 0.0)
        return shape

    def _arrangement(self, block: Block, items: list[str]) -> dict[str, tuple[int, float]]:
        """item -> (row, position in the row): igraph's Sugiyama layering, once per signature."""
        depth = len(block.path)
        local = {i: self.blocks.local(i, depth) for i in items}
        known = self._arrangements.get(block.signature)
        if known is None or not all(local[i] in known for i in items):
            index = {i: k for k, i in enumerate(items)}
            edges = list(dict.fromkeys((index[a], index[b]) for a, b in block.edges))
            if len(items) == 1:
                coords = [(0.0, 0.0)]
            else:
                rows = _rows(len(items), edges, [k for k, i in enumerate(items) if i in self.blocks.leaves])
                coords = igraph.Graph(n=len(items), edges=edges, directed=True).layout_sugiyama(
                    layers=rows).coords
            known = {local[i]: (int(round(y)), float(x)) for i, (x, y) in zip(items, coords, strict=True)}
            self._arrangements[block.signature] = known
        return {i: known[local[i]] for i in items}

    def loop(self, block: Block, loop: str) -> _Shape:
        """A loop's iterations side by side, or down (``LoopBlocks.across``)."""
        children = block.loops[loop]
        across = self.blocks.across(block, loop)
        parts: list[_Shape] = []
        for run in self.blocks.runs[block.path, loop]:
            its = run.iterations
            if self.rolled and run.middle and run.fold_id not in self.unroll:
                parts += [self._iteration(children[its[0]], loop, its[0]),
                          self._fold(block, run.fold_id, loop, run.middle),
                          self._iteration(children[its[-1]], loop, its[-1])]
            else:
                if self.rolled and run.middle:
                    self.unrolled.append(run.fold_id)
                parts += [self._iteration(children[it], loop, it) for it in its]
        boxes: list = []
        frames: list = []
        at = 0.0
        for part in parts:
            b, f = part.moved(at, 0.0) if across else part.moved(0.0, at)
            boxes += b
            frames += f
            at += (part.w if across else part.h) + BLOCK_GAP
        at -= BLOCK_GAP
        w = at if across else max(p.w for p in parts)
        h = max(p.h for p in parts) if across else at
        return _Shape(w, h, boxes, frames)

    def _iteration(self, child: Block, loop: str, it: int) -> _Shape:
        inner = self.block(child)
        label = self.blocks.iteration_label(loop, it)
        w = max(inner.w + 2 * PAD, len(english(label)) * CAPTION_CHAR_W + 2 * PAD)  # the caption fits
        boxes, frames = inner.moved((w - inner.w) / 2, CAPTION_H)
        h = inner.h + CAPTION_H + PAD
        return _Shape(w, h, boxes, [(label, 0.0, 0.0, w, h), *frames])

    def _fold(self, block: Block, fold_id: str, loop: str, middle: tuple[int, ...]) -> _Shape:
        children = block.loops[loop]
        nodes = sum(len(self.blocks.nodes_under(children[it])) for it in middle)
        span = self.blocks.span_label(loop, middle[0], middle[-1])
        fold = Fold(loop, span, self.blocks.texts.get(loop, ""), block.path, middle, nodes)
        self.folds[fold_id] = fold
        text = later_n("⋯ × {n} iteration ⋯\n{span}, {nodes} nodes",
                       "⋯ × {n} iterations ⋯\n{span}, {nodes} nodes", len(middle), span=span, nodes=nodes)
        w, h = box_size(text)
        self.fold_boxes[fold_id] = (text, w, h)
        return _Shape(w + 2 * PAD, h + CAPTION_H, [(fold_id, w / 2 + PAD, CAPTION_H + h / 2)], [])

    # -- the picture ----------------------------------------------------------------------
    def drawn_as(self) -> dict[str, str]:
        alias = {n.id: n.id for n in self.graph.nodes}
        for fold_id, fold in self.folds.items():
            parent = self.blocks.block_of[fold.parent]
            for it in fold.iterations:
                for node_id in self.blocks.nodes_under(parent.loops[fold.loop][it]):
                    alias[node_id] = fold_id
        return alias

    def edges(self, alias: dict[str, str]) -> list[PlacedEdge]:
        """Each graph edge between the boxes drawing its ends, once; a leaf feeding many
        iterations is wired to the first of them only (drawn once, not a hub)."""
        path = self.blocks.path
        first: dict[str, dict[str | None, Path]] = {}  # leaf -> loop -> its first iterations fed
        for n in self.graph.nodes:
            if n.kind in ("parameter", "input"):
                depth = len(path[n.id])
                seen = first[n.id] = {}
                for d in self.blocks.feeds.get(n.id, ()):
                    below = path[d][depth:]
                    loop = below[0][0] if below else None
                    if loop not in seen or below < seen[loop]:
                        seen[loop] = below
        out: dict[tuple[str, str], bool] = {}
        for src, dst in self.graph.edges:
            a, b = alias[src], alias[dst]
            if a == b:
                continue
            ps, pd = path[src], path[dst]
            if src in first:
                below = pd[len(ps):]
                if below != first[src][below[0][0] if below else None]:
                    continue
            d = 0
            while d < len(ps) and d < len(pd) and ps[d] == pd[d]:
                d += 1
            recurrent = d < len(ps) and d < len(pd) and ps[d][0] == pd[d][0]
            out[a, b] = out.get((a, b), False) or recurrent
        return [PlacedEdge(a, b, r) for (a, b), r in out.items()]

    def picture(self) -> CodePicture:
        shape = self.block(self.blocks.root)
        alias = self.drawn_as()
        fills = theme.GRAPH_FILL
        nodes = []
        for i, x, y in shape.boxes:
            if i in self.fold_boxes:
                text, w, h = self.fold_boxes[i]
                nodes.append(PlacedNode(i, "fold", text, x + MARGIN, y + MARGIN, w, h, fills["op"], None))
            else:
                n: Node = self.by_id[i]
                text, w, h = self.box(i)
                nodes.append(PlacedNode(i, n.kind, text, x + MARGIN, y + MARGIN, w, h,
                                        fills.get(n.kind, fills["op"]), n))
        frames = tuple(Frame(label, x + MARGIN, y + MARGIN, w, h) for label, x, y, w, h in shape.frames)
        how = pictures.UNROLLED if not self.folds else later_n(
            "rolled: {n} run of identical iterations drawn as first, one box and last, so {boxes} boxes draw "
            "the {nodes} nodes", "rolled: {n} runs of identical iterations drawn as first, one box and last, "
            "so {boxes} boxes draw the {nodes} nodes", len(self.folds),
            boxes=sum(1 for p in nodes if p.node is not None), nodes=self.graph.counts.nodes)
        caption = pictures.caption_of(self.graph.counts, how)
        return CodePicture("rolled" if self.folds else "unrolled", tuple(nodes), tuple(self.edges(alias)),
                           frames, shape.w + 2 * MARGIN, shape.h + 2 * MARGIN, caption,
                           sum(len(f.iterations) for f in self.folds.values()), alias, self.graph,
                           self.folds, tuple(self.unrolled))


def _rows(n: int, edges: list[tuple[int, int]], leaves: list[int]) -> list[int] | None:
    """Each item's row: the longest path from a source, and a leaf (a weight) one row above
    the first node it feeds, not up in the first row with long edges down. None on a cycle
    (igraph then breaks it itself)."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indegree = [0] * n
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    row = [0] * n
    todo = [k for k in range(n) if not indegree[k]]
    order = []
    while todo:
        k = todo.pop()
        order.append(k)
        for b in succ[k]:
            row[b] = max(row[b], row[k] + 1)
            indegree[b] -= 1
            if not indegree[b]:
                todo.append(b)
    if len(order) < n:
        return None
    preds: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        preds[b].append(a)
    pulled = set(leaves)  # leaves, and what only leaves feed (a weight's transpose)
    for k in order:
        if preds[k] and all(a in pulled for a in preds[k]):
            pulled.add(k)
    for k in reversed(order):
        if k in pulled and succ[k]:
            row[k] = min(row[b] for b in succ[k]) - 1
    low = min(row, default=0)
    return [r - low for r in row]
