"""A laid-out graph as plain data: every box, edge and frame placed, in points, y down.

``Picture`` is what a layout hands the writers: the DOT writer (stockdemo/render/dot.py) pins
every position for Graphviz, the interactive view (stockdemo/render/payload.py) draws the
same boxes in the browser. A layout fills it (stockdemo/layout/steps.py places a run's graph
as time steps x layers); ``box_size`` sizes a box as Graphviz would, so the two agree.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

from stockdemo.graph import Graph, Node, NodeCounts, op_name

INCH = 72.0  # points per inch
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


def box_size(label: str) -> tuple[float, float]:
    """(width, height) in points of a box holding ``label``, as Graphviz sizes it."""
    lines = label.split("\n")
    return (max(MIN_W, max(map(len, lines)) * CHAR_W + PAD_X),
            max(MIN_H, len(lines) * LINE_H + PAD_Y))
