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

from stockdemo import heap
from stockdemo.graph import Graph, Node, NodeCounts, op_name, said_label, said_shape
from stockdemo.i18n import Message, Nn_, english, later, later_n, tr
from stockdemo.i18n.deferred import Lines, later_lines

# Text a picture holds: a name (an op's, a parameter's) as it is, or words said when shown, in
# the reader's language (the picture is cached for every session; its sizes are the English's).
Words = str | Message | Lines

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
    label: Words  # text in the box; lines separated by "\n" (shape on the last line)
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

    label: Words
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
    caption: Words
    folded_steps: int  # 0 unless max_nodes forced a fold
    drawn_as: dict[str, str]  # every graph node id -> the drawn id that stands for it
    graph: Graph  # the graph drawn, whole

    @property
    def counts(self) -> NodeCounts:
        """The whole graph's counts, drawn or not (``stockdemo.graph.count_nodes``)."""
        return self.graph.counts

    @cached_property
    def stands_for(self) -> dict[str, Words]:
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
            if kinds[drawn] == "fold":
                words = STANDS_FOR["fold"]
            elif kinds[drawn] == "loop":
                words = STANDS_FOR["loop"]
            else:
                words = STANDS_FOR["steps" if len(steps) == len(ids) else "nodes"]
            out[drawn] = later_n(*words, len(ids), steps=len(steps), span=span)
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
            where = [tr("parameter tensor {name}", name=node.param or node.label)]
        else:  # the input or the output: its own label ("input x", "predictions")
            where = [str(said_label(node))]
        if node.step is not None:
            where.append(f"t {node.step}")
        if node.layer is not None:
            where.append(tr("layer {layer}", layer=str(node.layer)))
        drawn = self.drawn_as.get(node_id)
        return named_node(node_id, where, self.stands_for.get(drawn) if drawn is not None else None,
                          self.view == "rolled", markdown)


# What a box drawing several nodes stands for: (one, many), {n} nodes.
STANDS_FOR = {
    "fold": Nn_("{n} node of the {steps} folded steps, {span}",
                "{n} nodes of the {steps} folded steps, {span}"),
    "loop": Nn_("{n} node of steps {span} unlike the step drawn",
                "{n} nodes of steps {span} unlike the step drawn"),
    "steps": Nn_("{n} node, one per time step, {span}", "{n} nodes, one per time step, {span}"),
    "nodes": Nn_("{n} node, {span}", "{n} nodes, {span}"),
}


def named_node(node_id: str, where: list[str], box: Words | None, rolled: bool, markdown: bool) -> str:
    """A node as the page names it, in the language spoken now: its id (as code when
    ``markdown``), where it is, and what its box stands for when it draws more than it."""
    text = f"{f'`{node_id}`' if markdown else node_id} ({', '.join(where)})"
    if box is None:
        return text
    if rolled:
        return tr("{node}, drawn rolled: its box stands for {box}", node=text, box=box)
    return tr("{node}, drawn folded: its box stands for {box}", node=text, box=box)


UNROLLED = later("unrolled: one box per node")


def box_text(node: Node, label: str) -> Words:
    """What ``node``'s box says: ``label`` (its own, or a transpose's weight), its shape below."""
    said = said_label(node, label)
    return said if node.shape is None else later_lines(said, said_shape(node.shape))


def caption_of(counts: NodeCounts, how: Words) -> Message:
    """A picture's caption: the whole graph counted, then ``how`` the picture draws it."""
    return later("{summary} · {edges} · {how}", summary=counts.summary(),
                 edges=later_n("{n} edge", "{n} edges", counts.edges), how=how)


def box_size(label: Words) -> tuple[float, float]:
    """(width, height) in points of a box holding ``label``, as Graphviz sizes it (its English:
    every reader's picture is one, and the browser fits the words said in the box)."""
    lines = english(label).split("\n")
    return (max(MIN_W, max(map(len, lines)) * CHAR_W + PAD_X),
            max(MIN_H, len(lines) * LINE_H + PAD_Y))


def picture_bytes(picture: Picture) -> int:
    """A picture's bytes apart from the graph it draws, which its run's cached value counts (a
    walk of the graph again cost more than the rest of the picture's, on a Playground move)."""
    return heap.size_of(picture, apart=(Graph, Node))
