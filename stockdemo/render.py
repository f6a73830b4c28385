"""Draw a captured ``Graph``: ``layout`` places it, writers turn the picture into text.

Graphviz's ``dot`` layout chokes on a raw unrolled RNN graph: the shared
parameters are hubs wired to every time step. We know the structure (time
step x layer, read from each node's own ``layer``, ``step`` and ``role``), so
``layout`` places every node itself: time runs across, layers run down, each
parameter is drawn once per layer. Writers only draw: ``write_dot`` pins every
position for Graphviz (``neato`` with ``pos="x,y!"``), the interactive view
draws the same ``Picture`` in the browser.

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
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter
from typing import NamedTuple

from stockdemo import theme
from stockdemo.graph import FUSED, HEAD, POST, PRE, STEP, Graph, Node, NodeCounts, op_name

NODE_BUDGET = 250  # auto view: unrolled up to this many nodes
MAX_DRAWN_NODES = 1200  # unrolled view for Graphviz: fold middle steps past this

# Colours come from the one theme (Okabe-Ito: safe for colour-blind readers).
FILL = theme.GRAPH_FILL
TEXT = theme.TEXT
MUTED = theme.MUTED
EDGE = theme.GRAPH_EDGE
RECURRENT = theme.RECURRENT

# Geometry, in points (1/72 inch), y down.
INCH = 72.0
COL = 1.1 * INCH  # one node column
PARAM_COL = 1.75 * INCH  # parameter names are longer
ROW = 0.72 * INCH  # one node row
BLOCK_GAP = 0.25 * INCH
BAND_GAP = 0.6 * INCH
CAPTION_H = 0.45 * INCH  # a frame's caption line, above its first row
MARGIN = 0.2 * INCH  # around the whole picture
FONT = "Helvetica"
FONT_SIZE = 12
# Box sizes as Graphviz sizes them for 12 pt Helvetica (margin 0.08 x 0.04 in,
# height at least 0.4 in, width at least 0.75 in); CHAR_W is its mean advance.
CHAR_W = 6.6
LINE_H = 14.4
PAD_X, PAD_Y = 0.16 * INCH, 0.08 * INCH
MIN_W, MIN_H = 0.75 * INCH, 0.4 * INCH


@dataclass(frozen=True)
class PlacedNode:
    id: str  # drawn id: a graph node id, or a marker id ("L0.fold", "L0.loop")
    kind: str  # "input" | "parameter" | "op" | "output" | "fold" | "loop"
    label: str  # text in the box; lines separated by "\n" (shape on the last line)
    x: float  # centre, points, origin top-left, y grows down
    y: float
    w: float  # box width and height, points
    h: float
    fill: str  # "#RRGGBB" from stockdemo.theme
    node: Node | None  # the graph's Node (None for markers)


@dataclass(frozen=True)
class PlacedEdge:
    src: str  # drawn ids
    dst: str
    recurrent: bool  # carries the hidden state to the next step


@dataclass(frozen=True)
class Frame:
    """Dashed outline of a block (a time step, "all steps at once", ...)."""

    label: str
    x: float  # top-left corner, points, y down
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Picture:
    view: str  # "unrolled" | "rolled"
    nodes: tuple[PlacedNode, ...]
    edges: tuple[PlacedEdge, ...]
    frames: tuple[Frame, ...]
    width: float  # bounding box, points
    height: float
    caption: str
    folded_steps: int  # 0 unless max_nodes forced a fold
    drawn_as: dict[str, str]  # every graph node id -> the drawn id that stands for it
    graph: Graph  # the graph drawn, whole

    @property
    def counts(self) -> NodeCounts:
        """The whole graph's counts, drawn or not (``stockdemo.graph.count_nodes``)."""
        return self.graph.counts

    @cached_property
    def stands_for(self) -> dict[str, str]:
        """Drawn id -> what its box stands for, for every box drawing more than its own node.

        A rolled box: '200 nodes, one per time step, t 0…199'; a fold: '96 nodes
        of the folded steps, t 2…97'. Unrolled and unfolded: empty.
        """
        members: dict[str, list[str]] = defaultdict(list)
        for node_id, drawn in self.drawn_as.items():
            if node_id != drawn:
                members[drawn].append(node_id)
        if not members:
            return {}
        by_id = self.graph.by_id
        kinds = {p.id: p.kind for p in self.nodes}
        out = {}
        for drawn, ids in members.items():
            if drawn in by_id:
                ids.append(drawn)
            steps = sorted({by_id[i].step for i in ids if by_id[i].step is not None})
            span = f"t {steps[0]}…{steps[-1]}" if len(steps) > 1 else f"t {steps[0]}" if steps else ""
            n = f"{len(ids):,} node{'' if len(ids) == 1 else 's'}"
            if kinds[drawn] == "fold":
                out[drawn] = f"{n} of the {len(steps)} folded steps, {span}"
            elif kinds[drawn] == "loop":
                out[drawn] = f"{n} of steps {span} unlike the step drawn"
            elif len(steps) == len(ids):
                out[drawn] = f"{n}, one per time step, {span}"
            else:
                out[drawn] = f"{n}, {span}"
        return out

    def describe(self, node_id: str, markdown: bool = False) -> str:
        """One graph node as the page names it: 'L0.t0/Addmm0 (Addmm, t 0, layer 0)', and,
        when its box stands for more nodes, what the box stands for.

        ``markdown``: the id as code (`` `L0.t0/Addmm0` ``).
        """
        node = self.graph.by_id[node_id]
        if node.kind == "op":
            where = [op_name(node.op)]
        elif node.kind == "parameter":
            where = [f"parameter tensor {node.param or node.label}"]
        else:  # the input or the output: its own label ("input x", "predictions")
            where = [node.label]
        if node.step is not None:
            where.append(f"t {node.step}")
        if node.layer is not None:
            where.append(f"layer {node.layer}")
        text = f"{f'`{node_id}`' if markdown else node_id} ({', '.join(where)})"
        drawn = self.drawn_as.get(node_id)
        box = self.stands_for.get(drawn) if drawn is not None else None
        if box is not None:
            how = "rolled" if self.view == "rolled" else "folded"
            text += f", drawn {how}: its box stands for {box}"
        return text


@dataclass(frozen=True)
class Rendering:
    dot: str
    view: str  # "unrolled" or "rolled": what was drawn
    drawn_nodes: int
    folded_steps: int  # unrolled only: middle steps folded into one box
    caption: str


def layout(graph: Graph, view: str = "auto", max_nodes: int | None = MAX_DRAWN_NODES) -> Picture:
    """Place every node of ``graph``: time across, layers down, positions in points, y down.

    ``max_nodes=None`` never folds (the interactive view draws every node).
    """
    return _lay_out(graph, view, max_nodes, complete=True)


def _lay_out(graph: Graph, view: str, max_nodes: int | None, complete: bool) -> Picture:
    """``complete=False``: ``drawn_as`` skips rolled-away steps the edges never reach (DOT needs no more)."""
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
        blocks = _Blocks(graph)
        drawn = _steps_to_draw(blocks, rolled, max_nodes)
        placement = _Placement(blocks, drawn, _Style(graph, rolled))
        alias = _aliases(blocks, drawn, placement, rolled, complete)
        edges = _edges(blocks, drawn, placement, alias, rolled)
        boxes = sum(1 for i in placement.placed if i in graph.by_id)
        picture = _picture(view, placement, edges, alias, drawn.folded,
                           _caption(graph, view, drawn.folded, boxes))
    finally:
        if gc_was_enabled:
            gc.enable()
    return picture


def _caption(graph: Graph, view: str, folded: int, boxes: int) -> str:
    """The whole graph's counts, then what the picture draws of it."""
    counts = graph.counts
    caption = f"{counts.summary()} · {counts.edges:,} edges"
    if view == "rolled":
        steps = graph.meta.get("seq_len")
        caption += (f" · rolled: each layer's block stands for {steps} time "
                    f"step{'' if steps == 1 else 's'}, so {boxes:,} boxes draw the {counts.nodes:,} nodes")
    elif folded:
        caption += f" · unrolled, {folded} middle steps folded per layer into one box"
    else:
        caption += " · unrolled: one box per node"
    return caption


def render_dot(graph: Graph, view: str = "auto") -> Rendering:
    """Graph -> DOT with pinned positions (time across, layers down)."""
    picture = _lay_out(graph, view, MAX_DRAWN_NODES, complete=False)  # ~10 ms less at T 200 L 4
    return Rendering(write_dot(picture), picture.view, len(picture.nodes), picture.folded_steps,
                     picture.caption)


def short_param(name: str) -> str:
    """'rnn.weight_hh_l0' -> 'W_hh'; 'rnn.cells.1.bias_ih' -> 'b_ih'; 'fc.weight' -> 'fc.W'."""
    last = name.rsplit(".", 1)[-1]
    kind, _, rest = last.partition("_")
    letter = {"weight": "W", "bias": "b"}.get(kind, kind)
    if not rest:
        return f"{name.rsplit('.', 1)[0].rsplit('.', 1)[-1]}.{letter}"
    return f"{letter}_{rest.split('_l')[0]}"


def box_size(label: str) -> tuple[float, float]:
    """(width, height) in points of a box holding ``label``, as Graphviz sizes it."""
    lines = label.split("\n")
    return (max(MIN_W, max(map(len, lines)) * CHAR_W + PAD_X),
            max(MIN_H, len(lines) * LINE_H + PAD_Y))


# The layout in four steps, each reading the nodes' own fields (layer, step, role, kind):
# _Blocks groups the nodes, _steps_to_draw prunes (rolled: one step; past the budget:
# fold the middle), _Placement places the boxes, _aliases says which box draws each
# node, _edges wires the boxes. What the boxes say and how they are coloured is
# _Style's alone: placement only reads the sizes it hands out.

class _Blocks:
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


class _Drawn(NamedTuple):
    """Which steps a view draws: the pruning, before anything is placed."""

    shown: dict[int, list[int | None]]  # layer -> steps drawn, in order; None: the folded run
    hidden: dict[int, list[int]]  # layer -> steps folded away (unrolled past the budget)
    folded: int  # steps folded per layer
    first_step: dict[int | None, int]  # layer -> first step drawn


def _steps_to_draw(blocks: _Blocks, rolled: bool, max_nodes: int | None) -> _Drawn:
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
    return _Drawn(shown, hidden, folded, first_step)


def _fold(blocks: _Blocks, max_nodes: int, total: int) -> tuple[dict[int, list[int | None]], int]:
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


class _Style:
    """What each box says, how big that makes it, and its colour; what each frame is called."""

    def __init__(self, graph: Graph, rolled: bool) -> None:
        self.graph = graph
        self.rolled = rolled
        self._preds = graph.preds
        self._boxes: dict[tuple[str, tuple[int, ...] | None], tuple[str, float, float]] = {}

    def box(self, n: Node) -> tuple[str, float, float]:
        """(box text, width, height) of a node: its label, its shape on the last line."""
        label = n.label
        if label == "T" and n.kind == "op":  # a transpose names its weight
            for src in self._preds.get(n.id, ()):
                source = self.graph.by_id.get(src)
                if source is not None and source.kind == "parameter" and source.param:
                    label = f"{short_param(source.param)}.T"
        key = (label, n.shape)
        box = self._boxes.get(key)
        if box is None:
            text = label
            if n.shape is not None:
                text += "\n" + ("×".join(map(str, n.shape)) if n.shape else "scalar")
            box = self._boxes[key] = (text, *box_size(text))
        return box

    def fill(self, n: Node) -> str:
        return FILL["fused"] if n.role == FUSED else FILL.get(n.kind, FILL["op"])

    def block_caption(self, role: str, layer: int) -> str:
        return {PRE: "all steps at once", FUSED: f"layer {layer}: fused"}[role]

    def step_caption(self, layer: int, t: int) -> str:
        prefix = f"L{layer} · " if self.graph.meta.get("num_layers", 1) > 1 else ""
        if self.rolled:
            return f"{prefix}each step (× {self.graph.meta.get('seq_len')})"
        return f"{prefix}t = {t}"

    def fold_marker(self, layer: int, hidden: list[int], n_nodes: int) -> Node:
        return Node(f"L{layer}.fold", "fold",
                    f"⋯ {len(hidden)} more steps ⋯\n(t={hidden[0]}…{hidden[-1]}, {n_nodes} nodes)")

    def loop_marker(self, layer: int, steps: int) -> Node:
        return Node(f"L{layer}.loop", "loop", f"h → next step\n(× {steps - 1})")


class _Placement:
    """Where every drawn box goes: time across, layers down, in points with y down; and the frames."""

    def __init__(self, blocks: _Blocks, drawn: _Drawn, style: _Style) -> None:
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
        w, h = self._place_block(head, hx, hy, caption="head: last step → fc")
        if "output" in special:
            self._put(special["output"], hx, hy + h + ROW * 0.4)
        for i, p in enumerate(params.get(None, [])):  # the head's own weights, beside it
            pw = box(p)[1]
            self._put(p, hx + w + max(PARAM_COL * 0.3, pw / 2 - COL * 0.45 + BLOCK_GAP / 2),
                      hy + ROW * (0.6 + i))

    def _place_block(self, block: list[Node], x: float, y: float, caption: str) -> tuple[float, float]:
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


def _aliases(blocks: _Blocks, drawn: _Drawn, placement: _Placement, rolled: bool,
             complete: bool) -> dict[str, str]:
    """Every graph node id -> the id of the box that draws it: itself, a fold, or (rolled)
    the same op of the step shown.

    ``complete=False``: rolled-away steps the edges never reach are left out.
    """
    graph_ids = blocks.graph.by_id
    alias = {i: i for i in placement.placed if i in graph_ids}
    for layer, hidden in drawn.hidden.items():
        fold = placement.folds[layer]
        for t in hidden:
            for n in blocks.ops[(layer, STEP, t)]:
                alias[n.id] = fold
    if rolled:
        for layer, (shown,) in drawn.shown.items():
            _alias_other_steps(alias, blocks, layer, shown, placement.loops[layer], complete)
    return alias


def _alias_other_steps(alias: dict[str, str], blocks: _Blocks, layer: int, shown: int, loop_id: str,
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


def _edges(blocks: _Blocks, drawn: _Drawn, placement: _Placement, alias: dict[str, str],
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
             folded: int, caption: str) -> Picture:
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


def _ranked(block: list[Node]) -> Iterator[tuple[tuple[str | None, int], Node]]:
    """((op, its rank among this block's ops of that name), node), in creation order."""
    seen: dict[str | None, int] = {}
    for n in block:
        k = seen.get(n.op, 0)
        seen[n.op] = k + 1
        yield (n.op, k), n


# -- DOT ---------------------------------------------------------------------

def dot_statements(picture: Picture) -> Iterator[tuple[str, object, dict[str, str]]]:
    """The DOT statements of a picture, in order: (kind, name or (a, b), attrs).

    Positions are pinned in inches with y up, as Graphviz reads them.
    """
    yield "graph", None, dict(
        layout="neato", splines="false", bgcolor="transparent", fontname=FONT, fontsize="13",
        fontcolor=MUTED, label=picture.caption, labelloc="t", labeljust="l", pad="0.2")
    # No outputorder=edgesfirst: it breaks the browser's redraw (d3-graphviz
    # throws "undefined" and keeps the old picture when the slider moves).
    # No rounded corners anywhere: the browser redraws a rounded box as a long
    # path, and with them an update of a 50-node graph took 2.5-3 s instead of 0.3 s.
    yield "node", None, dict(
        fontname=FONT, fontsize=str(FONT_SIZE), fontcolor=TEXT, style="filled", shape="box",
        color=theme.BORDER, penwidth="1", margin="0.08,0.04", height="0.4")
    yield "edge", None, dict(color=EDGE, arrowsize="0.6", penwidth="1")
    for i, f in enumerate(picture.frames):
        x, y = f.x / INCH, -f.y / INCH
        w, h = f.w / INCH, f.h / INCH
        yield "N", f"box{i}", dict(
            label="", pos=f"{x + w / 2:.2f},{y - h / 2:.2f}!", shape="box", style="dashed",
            color=MUTED, fixedsize="true", width=f"{w:.2f}", height=f"{h:.2f}")
        yield "N", f"caption{i}", dict(
            label=f.label, pos=f"{x + 0.1 + 0.045 * len(f.label):.2f},{y - 0.17:.2f}!",
            shape="plaintext", style="", fontcolor=MUTED, fontsize="12", width="0",
            height="0", margin="0", fixedsize="false")
    for p in picture.nodes:
        yield "N", p.id, {**_node_attrs(p), "pos": f"{p.x / INCH:.2f},{-p.y / INCH:.2f}!"}
    recurrent_style = dict(color=RECURRENT, style="dashed" if picture.view == "rolled" else "solid",
                           penwidth="1.4")
    for e in picture.edges:
        yield "E", (e.src, e.dst), (dict(recurrent_style) if e.recurrent else {})


def _node_attrs(p: PlacedNode) -> dict[str, str]:
    tooltip = p.id
    n = p.node
    if n is not None and n.op:
        tooltip += f" | {n.op}"
    if n is not None and n.shape is not None:
        tooltip += f" | shape {tuple(n.shape)}"
    attrs = {"label": p.label, "tooltip": tooltip}
    if p.kind in ("fold", "loop"):
        attrs.update(style="dashed", color=RECURRENT if p.kind == "loop" else MUTED,
                     fontcolor=MUTED)
    else:
        attrs["fillcolor"] = p.fill
    if p.kind in ("input", "output", "parameter"):
        attrs["penwidth"] = "2"  # data and weights: a heavier frame than ops
    return attrs


def write_dot(picture: Picture, name: str = "autograd") -> str:
    """DOT source of a picture, every position pinned (download, command line)."""
    return write_statements(dot_statements(picture), name)


# Written here rather than through the graphviz package: its per-node checks
# and quoting took half of each render (a tenth of a Playground rerun under
# load). The output is the package's, byte for byte (tests/test_dot_writer.py).

_BARE_ID = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)")
_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


def dot_id(text: str) -> str:
    """A DOT ID: bare where DOT allows it, else double-quoted with its quotes escaped."""
    if _BARE_ID.fullmatch(text) and text.lower() not in _KEYWORDS:
        return text
    return '"' + text.replace('"', '\\"') + '"'


def _attr_list(attrs: dict[str, str], first: str | None = None) -> str:
    items = ([f"label={dot_id(first)}"] if first is not None else []) \
        + [f"{k}={dot_id(v)}" for k, v in sorted(attrs.items())]
    return f" [{' '.join(items)}]" if items else ""


def write_statements(statements: Iterable[tuple[str, object, dict[str, str]]],
                     name: str = "autograd") -> str:
    """DOT source from statements: graph/node/edge defaults, then N(odes) and E(dges).

    statements: (kind, target, attrs) with kind "graph" | "node" | "edge"
    (defaults; target None), "N" (target a node name) or "E" (target (a, b)).
    """
    lines = [f"digraph {dot_id(name)} {{"]
    for kind, target, attrs in statements:
        if kind == "N":
            rest = dict(attrs)
            label = rest.pop("label", None)
            lines.append(f"\t{dot_id(target)}{_attr_list(rest, label)}")
        elif kind == "E":
            lines.append(f"\t{dot_id(target[0])} -> {dot_id(target[1])}{_attr_list(attrs)}")
        else:
            lines.append(f"\t{kind}{_attr_list(attrs)}")
    return "\n".join(lines) + "\n}\n"
