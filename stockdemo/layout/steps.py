"""Place a tagged ``Graph`` as time steps x layers: ``layout(graph) -> Picture``.

Graphviz's ``dot`` layout chokes on a raw unrolled RNN graph: the shared
parameters are hubs wired to every time step. We know the structure (time
step x layer, read from each node's own ``layer``, ``step`` and ``role``: a record's
tags, ``stockdemo.graph.capture``; ``stockdemo.layout.views`` chooses this view), so
``layout`` places every node itself: time runs across, layers run down, each
parameter is drawn once per layer. Writers only draw the ``Picture``
(stockdemo/layout/picture.py): ``write_dot`` pins every position for Graphviz, the
interactive view draws the same boxes in the browser.

Two views:

- **unrolled**: every node of the run, one block per time step and layer.
  Past ``max_nodes`` the middle steps fold into one "⋯ k steps" box
  (``max_nodes=None`` never folds).
- **rolled**: one block per layer standing for all T steps ("× T").

``view="auto"`` picks unrolled while the graph has at most ``NODE_BUDGET``
nodes. Either way the caption gives the full graph's exact counts
(``Graph.counts``), and each box drawing more than its own node says what it
stands for (``Picture.stands_for``).

Inside, placing is apart from styling: ``_Style`` alone decides what a box
says, its size and its colour; ``_Placement`` only reads the sizes.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterable
from operator import attrgetter

from stockdemo import theme
from stockdemo.graph import FUSED, HEAD, POST, PRE, STEP, Graph, Node
from stockdemo.i18n import Message, later, later_n
from stockdemo.layout.blocks import Blocks, Drawn, aliases, steps_to_draw
from stockdemo.layout.picture import (
    INCH,
    UNROLLED,
    Frame,
    Picture,
    PlacedEdge,
    PlacedNode,
    Words,
    box_size,
    box_text,
    caption_of,
)

NODE_BUDGET = 250  # auto view: unrolled up to this many nodes
MAX_DRAWN_NODES = 1200  # unrolled view for Graphviz: fold middle steps past this

# Colours come from the one theme (Okabe-Ito: safe for colour-blind readers).
FILL = theme.GRAPH_FILL

# Geometry, in points (1/72 inch), y down.
COL = 1.1 * INCH  # one node column
PARAM_COL = 1.75 * INCH  # parameter names are longer
ROW = 0.72 * INCH  # one node row
BLOCK_GAP = 0.25 * INCH
BAND_GAP = 0.6 * INCH
CAPTION_H = 0.45 * INCH  # a frame's caption line, above its first row
MARGIN = 0.2 * INCH  # around the whole picture


def layout(graph: Graph, view: str = "auto", max_nodes: int | None = MAX_DRAWN_NODES,
           complete: bool = True) -> Picture:
    """Place every node of ``graph``: time across, layers down, positions in points, y down.

    ``max_nodes=None`` never folds (the interactive view draws every node).
    ``complete=False``: ``drawn_as`` skips rolled-away steps the edges never reach (DOT
    needs no more).
    """
    if view not in ("auto", "rolled", "unrolled"):
        raise ValueError(f"view must be auto, rolled or unrolled, got {view!r}")
    if view == "auto":
        view = "unrolled" if len(graph.nodes) <= NODE_BUDGET else "rolled"
    if not graph.meta.get("unrolled"):
        view = "unrolled"  # fused or loop-free graphs have no steps to roll
    # Placing allocates many small acyclic objects; a collection triggered midway
    # would scan the whole heap (tens of ms with torch loaded) for nothing.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        rolled = view == "rolled"
        blocks = Blocks(graph)
        drawn = steps_to_draw(blocks, rolled, max_nodes)
        placement = _Placement(blocks, drawn, _Style(graph, rolled))
        alias = aliases(blocks, drawn, placement.placed, placement.folds, placement.loops, rolled,
                        complete)
        edges = _edges(blocks, drawn, placement, alias, rolled)
        boxes = sum(1 for i in placement.placed if i in graph.by_id)
        picture = _picture(view, placement, edges, alias, drawn.folded,
                           _caption(graph, view, drawn.folded, boxes))
    finally:
        if gc_was_enabled:
            gc.enable()
    return picture


def _caption(graph: Graph, view: str, folded: int, boxes: int) -> Message:
    """The whole graph's counts, then what the picture draws of it."""
    if view == "rolled":
        how = later_n("rolled: each layer's block stands for {n} time step, so {boxes} boxes draw the "
                      "{nodes} nodes", "rolled: each layer's block stands for {n} time steps, so {boxes} "
                      "boxes draw the {nodes} nodes", graph.meta.get("seq_len") or 0, boxes=boxes,
                      nodes=graph.counts.nodes)
    elif folded:
        how = later("unrolled, {folded} middle steps folded per layer into one box", folded=folded)
    else:
        how = UNROLLED
    return caption_of(graph.counts, how)


def short_param(name: str) -> str:
    """'rnn.weight_hh_l0' -> 'W_hh'; 'rnn.cells.1.bias_ih' -> 'b_ih'; 'fc.weight' -> 'fc.W'."""
    last = name.rsplit(".", 1)[-1]
    kind, _, rest = last.partition("_")
    letter = {"weight": "W", "bias": "b"}.get(kind, kind)
    if not rest:
        return f"{name.rsplit('.', 1)[0].rsplit('.', 1)[-1]}.{letter}"
    return f"{letter}_{rest.split('_l')[0]}"


# The layout in four steps, each reading the nodes' own fields (layer, step, role, kind):
# Blocks groups the nodes, steps_to_draw prunes (rolled: one step; past the budget:
# fold the middle; both in stockdemo/layout/blocks.py), _Placement places the boxes, aliases
# says which box draws each node, _edges wires the boxes. What the boxes say and how they
# are coloured is _Style's alone: placement only reads the sizes it hands out.

class _Style:
    """What each box says, how big that makes it, and its colour; what each frame is called."""

    def __init__(self, graph: Graph, rolled: bool) -> None:
        self.graph = graph
        self.rolled = rolled
        self._preds = graph.preds
        self._boxes: dict[tuple[str, tuple[int, ...] | None], tuple[Words, float, float]] = {}
        self._marks: dict[str, Message] = {}  # a marker's id -> its words

    def box(self, n: Node) -> tuple[Words, float, float]:
        """(box text, width, height) of a node: its label, its shape on the last line."""
        if n.id in self._marks:
            return (self._marks[n.id], *box_size(self._marks[n.id]))
        label = n.label
        if label == "T" and n.kind == "op":  # a transpose names its weight
            for src in self._preds.get(n.id, ()):
                source = self.graph.by_id.get(src)
                if source is not None and source.kind == "parameter" and source.param:
                    label = f"{short_param(source.param)}.T"
        key = (label, n.shape)
        box = self._boxes.get(key)
        if box is None:
            text = box_text(n, label)
            box = self._boxes[key] = (text, *box_size(text))
        return box

    def fill(self, n: Node) -> str:
        return FILL["fused"] if n.role == FUSED else FILL.get(n.kind, FILL["op"])

    def block_caption(self, role: str, layer: int) -> Message:
        if role == PRE:
            return later("all steps at once")
        return later("layer {layer}: fused", layer=str(layer))

    def step_caption(self, layer: int, t: int) -> Words:
        prefix = f"L{layer} · " if self.graph.meta.get("num_layers", 1) > 1 else ""
        if self.rolled:  # i18n: {layer} is "L1 · " (a layer's code name) or nothing
            return later("{layer}each step (× {steps})", layer=prefix, steps=self.graph.meta.get("seq_len"))
        return f"{prefix}t = {t}"

    def fold_marker(self, layer: int, hidden: list[int], n_nodes: int) -> Node:
        return self._mark(Node(f"L{layer}.fold", "fold", ""), later_n(
            "⋯ {n} more step ⋯\n(t={first}…{last}, {nodes} nodes)",
            "⋯ {n} more steps ⋯\n(t={first}…{last}, {nodes} nodes)",
            len(hidden), first=str(hidden[0]), last=str(hidden[-1]), nodes=n_nodes))

    def loop_marker(self, layer: int, steps: int) -> Node:
        return self._mark(Node(f"L{layer}.loop", "loop", ""), later("h → next step\n(× {n})", n=steps - 1))

    def _mark(self, node: Node, words: Message) -> Node:
        """A marker (not a graph node): its box says ``words``."""
        self._marks[node.id] = words
        return node


class _Placement:
    """Where every drawn box goes: time across, layers down, in points with y down; and the frames."""

    def __init__(self, blocks: Blocks, drawn: Drawn, style: _Style) -> None:
        self.blocks = blocks
        self.drawn = drawn
        self.style = style
        # drawn id -> (node, centre x, centre y, box text, w, h); markers included
        self.placed: dict[str, tuple[Node, float, float, str, float, float]] = {}
        self.frames: list[Frame] = []
        self.loops: dict[int, str] = {}  # layer -> its loop marker's id (rolled)
        self.folds: dict[int, str] = {}  # layer -> its fold marker's id
        self._preds = blocks.graph.preds
        self._grids: dict[tuple[str | None, ...], tuple[list[tuple[int, int]], int, int]] = {}
        self._layer_top: dict[int, float] = {}
        self._place()

    def _place(self) -> None:
        blocks, params, special = self.blocks.ops, self.blocks.params, self.blocks.special
        layers, steps = self.blocks.layers, self.blocks.steps
        shown_steps = self.drawn.shown
        box = self.style.box

        y = 0.0
        x_end = 0.0
        if "input" in special:
            self._put(special["input"], COL, y)
            y += ROW * 1.3
        param_w = max((box(p)[1] for p in self.blocks.graph.nodes if p.kind == "parameter"), default=0.0)
        after_params = max(PARAM_COL * 0.6, param_w / 2 + COL * 0.45) + BLOCK_GAP
        # Every layer's steps start at one x, so step t of each layer stands in one column.
        set_up = {layer: sum(self._measure(blocks[(layer, role, None)])[0] + BLOCK_GAP * 2
                             for role in (PRE, FUSED) if (layer, role, None) in blocks)
                  for layer in layers}
        steps_x = after_params + max(set_up.values(), default=0.0)
        for layer in layers:
            x = 0.0
            band_top = y
            heights = [0.0]
            # parameters of this layer: one column, drawn once
            for i, p in enumerate(params.get(layer, [])):
                self._put(p, x, y + i * ROW)
            heights.append(len(params.get(layer, [])) * ROW)
            x += after_params
            for role in (PRE, FUSED):
                block = blocks.get((layer, role, None))
                if block:
                    w, h = self._place_block(block, x, y, caption=self.style.block_caption(role, layer))
                    x += w + BLOCK_GAP * 2
                    heights.append(h)
            x = steps_x
            for t in shown_steps.get(layer, []):
                if t is None:
                    w, h = self._place_fold(layer, x, y)
                else:
                    block = blocks[(layer, STEP, t)]
                    w, h = self._place_block(block, x, y, caption=self.style.step_caption(layer, t))
                    if self.style.rolled:  # the hidden state goes round to the next step
                        loop = self.style.loop_marker(layer, len(steps[layer]))
                        self._put(loop, x + w + COL * 0.15, y + h / 2)
                        self.loops[layer] = loop.id
                        w += COL * 0.8
                x += w + BLOCK_GAP
                heights.append(h)
            post = blocks.get((layer, POST, None))
            if post:  # at the foot of the band, next to the layer below
                w, h = self._place_block(post, x, y + max(heights) - ROW, caption="")
                x += w + BLOCK_GAP
                heights.append(h)
            x_end = max(x_end, x)
            y = band_top + max(heights) + BAND_GAP

        head = blocks.get((None, HEAD, None), [])
        hx = x_end
        hy = self._layer_top.get(layers[-1], y) if layers else y
        w, h = self._place_block(head, hx, hy, caption=later("head: last step → fc"))
        if "output" in special:
            self._put(special["output"], hx, hy + h + ROW * 0.4)
        for i, p in enumerate(params.get(None, [])):  # the head's own weights, beside it
            pw = box(p)[1]
            self._put(p, hx + w + max(PARAM_COL * 0.3, pw / 2 - COL * 0.45 + BLOCK_GAP / 2),
                      hy + ROW * (0.6 + i))

    def _place_block(self, block: list[Node], x: float, y: float, caption: Words) -> tuple[float, float]:
        """Lay a block out by depth (rows down) within its own nodes. -> (width, height)"""
        width, col, (cells, _, rows), boxes = self._measure(block)
        top = y + (CAPTION_H if caption else 0.0)
        placed = self.placed
        for n, (d, i), (label, w, h) in zip(block, cells, boxes, strict=True):
            placed[n.id] = (n, x + i * col, top + d * ROW, label, w, h)
        if block and block[0].layer is not None:
            layer = block[0].layer
            self._layer_top[layer] = min(self._layer_top.get(layer, top), top)
        height = rows * ROW + (CAPTION_H if caption else 0.0)
        if caption:
            self.frames.append(Frame(caption, x - col * 0.45, y - ROW * 0.25, width - col * 0.1, height))
        return width, height

    def _measure(self, block: list[Node]):
        """-> (width, column width, grid, each node's box) of a block."""
        ops = tuple(map(_OP, block))
        grid = self._grids.get(ops)
        if grid is None:
            # Steps that run the same ops ran the same code, so they wire them
            # the same way: one grid per op sequence (T 200 L 4 has 800 blocks).
            grid = self._grids[ops] = self._grid(block)
        box = self.style.box
        boxes = [box(n) for n in block]
        col = max(COL, max((b[1] for b in boxes), default=0.0) + COL * 0.1)  # no overlaps
        return grid[1] * col, col, grid, boxes

    def _grid(self, block: list[Node]) -> tuple[list[tuple[int, int]], int, int]:
        """Each node's (row, column) in its block: row = depth among the block's own nodes.

        -> cells in block order, columns, rows
        """
        preds = self._preds
        depth: dict[str, int] = {}
        per_row: dict[int, int] = defaultdict(int)
        cells = []
        for n in block:  # creation order is a topological order
            d = 0
            for p in preds.get(n.id, ()):
                v = depth.get(p)  # only this block's nodes are in ``depth``
                if v is not None and v >= d:
                    d = v + 1
            depth[n.id] = d
            cells.append((d, per_row[d]))
            per_row[d] += 1
        return cells, max(per_row.values(), default=1), max(per_row, default=0) + 1

    def _place_fold(self, layer: int, x: float, y: float) -> tuple[float, float]:
        hidden = self.drawn.hidden[layer]
        n_nodes = sum(len(self.blocks.ops[(layer, STEP, t)]) for t in hidden)
        fold = self.style.fold_marker(layer, hidden, n_nodes)
        self._put(fold, x, y + ROW * 1.5)
        self.folds[layer] = fold.id
        return max(COL, self.style.box(fold)[1] / 2 + COL * 0.45), ROW * 3

    def _put(self, node: Node, x: float, y: float) -> None:
        self.placed[node.id] = (node, x, y, *self.style.box(node))


def _edges(blocks: Blocks, drawn: Drawn, placement: _Placement, alias: dict[str, str],
           rolled: bool) -> list[PlacedEdge]:
    """Edges between drawn boxes, each once.

    A shared weight is wired to the first drawn step only: wiring it to
    every step is what makes layouts explode, and ``W_hh.T`` on each
    step's transpose says the same in place.
    """
    graph = blocks.graph
    nodes = graph.by_id
    first_step = drawn.first_step
    if not (rolled or drawn.folded):  # every node drawn as itself: each edge as it is
        edges = []
        for src, dst in graph.edges:
            ns, nd = nodes[src], nodes[dst]
            if ns.kind == "parameter" and nd.role == STEP and nd.step != first_step.get(nd.layer):
                continue
            edges.append(PlacedEdge(src, dst, ns.role == STEP == nd.role and ns.layer == nd.layer
                                    and ns.step != nd.step))
        return edges
    placed = placement.placed
    if rolled:  # drawn nodes, and the step before the one shown (the recurrence)
        targets = list(placed)
        for layer, t in first_step.items():
            targets += map(_ID, blocks.ops.get((layer, STEP, t - 1), ()))
        preds = graph.preds
        pairs: Iterable[tuple[str, str]] = (
            (src, dst) for dst in targets for src in preds.get(dst, ()))
    else:
        pairs = graph.edges
    out: dict[tuple[str, str], bool] = {}
    for src, dst in pairs:
        a, b = alias.get(src), alias.get(dst)
        if a is None or b is None or a == b:
            continue
        ns, nd = nodes[src], nodes[dst]
        if ns.kind == "parameter":
            target = placed[b][0]
            if target.role == STEP and target.step != first_step.get(target.layer):
                continue
        recurrent = (ns.role == STEP == nd.role and ns.layer == nd.layer and ns.step != nd.step)
        if recurrent and rolled:
            loop = placement.loops[nd.layer]
            out.setdefault((a, loop), True)
            out.setdefault((loop, b), True)
        else:
            out.setdefault((a, b), recurrent)
    return [PlacedEdge(a, b, r) for (a, b), r in out.items()]


def _picture(view: str, placement: _Placement, edges: list[PlacedEdge], alias: dict[str, str],
             folded: int, caption: Message) -> Picture:
    """Shift everything so the picture starts at (MARGIN, MARGIN), colour it, and freeze it."""
    placed = placement.placed.values()
    frames = placement.frames
    left = min(min(p[1] - p[4] / 2 for p in placed), min((f.x for f in frames), default=0.0))
    top = min(min(p[2] - p[5] / 2 for p in placed), min((f.y for f in frames), default=0.0))
    dx, dy = MARGIN - left, MARGIN - top
    graph = placement.blocks.graph
    graph_ids = graph.by_id
    fill = placement.style.fill
    nodes = tuple(
        PlacedNode(i, n.kind, label, x + dx, y + dy, w, h, fill(n), n if i in graph_ids else None)
        for i, (n, x, y, label, w, h) in placement.placed.items())
    frames = [Frame(f.label, f.x + dx, f.y + dy, f.w, f.h) for f in frames]
    width = max(max(p[1] + p[4] / 2 for p in placed) + dx,
                max((f.x + f.w for f in frames), default=0.0)) + MARGIN
    height = max(max(p[2] + p[5] / 2 for p in placed) + dy,
                 max((f.y + f.h for f in frames), default=0.0)) + MARGIN
    return Picture(view, nodes, tuple(edges), tuple(frames), width, height, caption, folded, alias,
                   graph)


_OP, _ID = attrgetter("op"), attrgetter("id")
