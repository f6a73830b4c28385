"""Draw a captured ``Graph`` as Graphviz DOT, laid out by its known structure.

Graphviz's ``dot`` layout chokes on a raw unrolled RNN graph: the shared
parameters are hubs wired to every time step. We know the structure (time
step x layer), so we place every node ourselves and pin it (``neato`` with
``pos="x,y!"``): time runs across, layers run down, each parameter is drawn
once per layer. The browser's Graphviz then only draws, which stays fast.

Two views:

- **unrolled**: every node of the run, one block per time step and layer.
  Past ``MAX_DRAWN_NODES`` the middle steps fold into one "⋯ k steps" box.
- **rolled**: one block per layer standing for all T steps ("× T").

``view="auto"`` picks unrolled while the graph has at most ``NODE_BUDGET``
nodes. Either way the caption gives the full graph's exact counts.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from stockdemo import theme
from stockdemo.graph import FUSED, HEAD, POST, PRE, STEP, Graph, Node

NODE_BUDGET = 250  # auto view: unrolled up to this many nodes
MAX_DRAWN_NODES = 1200  # unrolled view: fold middle steps past this

# Colours come from the one theme (Okabe-Ito: safe for colour-blind readers).
FILL = theme.GRAPH_FILL
TEXT = theme.TEXT
MUTED = theme.MUTED
EDGE = theme.GRAPH_EDGE
RECURRENT = theme.RECURRENT

# Geometry, in inches.
COL = 1.1  # one node column
PARAM_COL = 1.75  # parameter names are longer
ROW = 0.72  # one node row
BLOCK_GAP = 0.25
BAND_GAP = 0.6
FONT = "Helvetica"


@dataclass(frozen=True)
class Rendering:
    dot: str
    view: str  # "unrolled" or "rolled": what was drawn
    drawn_nodes: int
    folded_steps: int  # unrolled only: middle steps folded into one box
    caption: str


def render_dot(graph: Graph, view: str = "auto") -> Rendering:
    """Graph -> DOT with pinned positions (time across, layers down)."""
    if view not in ("auto", "rolled", "unrolled"):
        raise ValueError(f"view must be auto, rolled or unrolled, got {view!r}")
    if view == "auto":
        view = "unrolled" if len(graph.nodes) <= NODE_BUDGET else "rolled"
    if not graph.meta.get("unrolled"):
        view = "unrolled"  # fused or loop-free graphs have no steps to roll
    layout = _Layout(graph, rolled=(view == "rolled"))
    seq_len = graph.meta.get("seq_len")
    caption = f"{len(graph.nodes)} nodes · {len(graph.edges)} edges"
    if view == "rolled":
        caption += f" · rolled: each layer's block stands for {seq_len} time steps"
    elif layout.folded:
        caption += f" · unrolled, {layout.folded} middle steps folded per layer"
    else:
        caption += " · unrolled: every node autograd recorded"
    return Rendering(layout.to_dot(caption), view, layout.drawn, layout.folded, caption)


def short_param(name: str) -> str:
    """'rnn.weight_hh_l0' -> 'W_hh'; 'rnn.cells.1.bias_ih' -> 'b_ih'; 'fc.weight' -> 'fc.W'."""
    last = name.rsplit(".", 1)[-1]
    kind, _, rest = last.partition("_")
    letter = {"weight": "W", "bias": "b"}.get(kind, kind)
    if not rest:
        return f"{name.rsplit('.', 1)[0].rsplit('.', 1)[-1]}.{letter}"
    return f"{letter}_{rest.split('_l')[0]}"


class _Layout:
    """Positions and edges for one view of one graph."""

    def __init__(self, graph: Graph, rolled: bool) -> None:
        self.graph = graph
        self.rolled = rolled
        self.nodes: dict[str, Node] = {}
        self.pos: dict[str, tuple[float, float]] = {}
        self.extra_label: dict[str, str] = {}
        self.boxes: list[tuple[str, float, float, float, float, str]] = []
        self.alias: dict[str, str] = {}  # drawn id for every node of the graph
        self.folded = 0
        self._rolled_step: dict[str, int] = {}
        self._place()

    @property
    def drawn(self) -> int:
        return len(self.pos)

    # -- placement ---------------------------------------------------------
    def _place(self) -> None:
        g = self.graph
        blocks: dict[tuple, list[Node]] = defaultdict(list)
        params: dict[int | None, list[Node]] = defaultdict(list)
        special: dict[str, Node] = {}
        for n in g.nodes:
            if n.kind == "op":
                blocks[(n.layer, n.role, n.step)].append(n)
            elif n.kind == "parameter":
                params[n.layer].append(n)
            else:
                special[n.kind] = n
        self._preds = g.preds

        layers = sorted({k[0] for k in blocks if k[0] is not None})
        steps = {layer: sorted(k[2] for k in blocks if k[0] == layer and k[1] == STEP)
                 for layer in layers}
        shown_steps = self._steps_to_draw(blocks, steps)

        y = 0.0
        x_end = 0.0
        first_x = 0.0
        if "input" in special:
            self._put(special["input"], COL * 1.0, y)
            y -= ROW * 1.3
        for layer in layers:
            x = 0.0
            band_top = y
            heights = [0.0]
            # parameters of this layer: one column, drawn once
            for i, p in enumerate(params.get(layer, [])):
                self._put(p, x, y - i * ROW)
            heights.append(len(params.get(layer, [])) * ROW)
            x += PARAM_COL * 0.6 + BLOCK_GAP
            for role in (PRE, FUSED):
                block = blocks.get((layer, role, None))
                if block:
                    w, h = self._place_block(block, x, y, caption=self._caption(role, layer))
                    x += w + BLOCK_GAP * 2
                    heights.append(h)
            first_x = x
            drawn = shown_steps.get(layer, [])
            for t in drawn:
                if t is None:
                    w, h = self._place_fold(layer, steps[layer], drawn, blocks, x, y)
                else:
                    block = blocks[(layer, STEP, t)]
                    w, h = self._place_block(block, x, y, caption=self._step_caption(layer, t))
                    if self.rolled:  # the hidden state goes round to the next step
                        loop = Node(f"L{layer}.loop", "loop", f"h → next step\n(× {len(steps[layer]) - 1})")
                        self._put(loop, x + w + COL * 0.15, y - h / 2)
                        w += COL * 0.8
                x += w + BLOCK_GAP
                heights.append(h)
            post = blocks.get((layer, POST, None))
            if post:  # at the foot of the band, next to the layer below
                w, h = self._place_block(post, x, y - max(heights) + ROW, caption="")
                x += w + BLOCK_GAP
                heights.append(h)
            x_end = max(x_end, x)
            y = band_top - max(heights) - BAND_GAP
        self._first_step_x = first_x

        head = blocks.get((None, HEAD, None), [])
        hx = x_end
        hy = y + BAND_GAP + ROW  # beside the last layer
        if layers:
            hy = self._band_y_of_last(layers[-1])
        w, h = self._place_block(head, hx, hy, caption="head: last step → fc")
        if "output" in special:
            self._put(special["output"], hx, hy - h - ROW * 0.4)
        for i, p in enumerate(params.get(None, [])):  # the head's own weights, beside it
            self._put(p, hx + w + PARAM_COL * 0.3, hy - ROW * (0.6 + i))
        self._mark_param_reuse()

    def _band_y_of_last(self, layer: int) -> float:
        ys = [self.pos[n.id][1] for n in self.nodes.values()
              if n.layer == layer and n.kind == "op" and n.id in self.pos]
        return max(ys) if ys else 0.0

    def _steps_to_draw(self, blocks, steps) -> dict[int, list[int | None]]:
        """Per layer, the steps to draw in order; None marks the folded run."""
        if self.rolled:
            shown = {layer: [s[1] if len(s) > 1 else s[0]] for layer, s in steps.items() if s}
            self._rolled_step = {f"L{layer}": s[0] for layer, s in shown.items()}
            return shown
        total = len(self.graph.nodes)
        if total <= MAX_DRAWN_NODES:
            return {layer: list(s) for layer, s in steps.items()}
        step_nodes = sum(len(blocks[(layer, STEP, t)]) for layer, s in steps.items() for t in s)
        per_step = max(1, step_nodes // max(1, sum(len(s) for s in steps.values())))
        budget = MAX_DRAWN_NODES - (total - step_nodes)
        keep = max(1, budget // (2 * per_step * max(1, len(steps))))
        shown: dict[int, list[int | None]] = {}
        for layer, s in steps.items():
            if len(s) <= 2 * keep + 1:
                shown[layer] = list(s)
            else:
                shown[layer] = [*s[:keep], None, *s[-keep:]]
                self.folded = len(s) - 2 * keep
        return shown

    def _place_block(self, block: list[Node], x: float, y: float, caption: str) -> tuple[float, float]:
        """Lay a block out by depth (rows down) within its own nodes. -> (width, height)"""
        members = {n.id for n in block}
        depth: dict[str, int] = {}
        for n in block:  # creation order is a topological order
            inner = [depth[p] for p in self._preds.get(n.id, ()) if p in members and p in depth]
            depth[n.id] = 1 + max(inner) if inner else 0
        rows: dict[int, list[Node]] = defaultdict(list)
        for n in block:
            rows[depth[n.id]].append(n)
        width = max((len(r) for r in rows.values()), default=1)
        top = y - (0.45 if caption else 0.0)
        for d, row in rows.items():
            for i, n in enumerate(row):
                self._put(n, x + i * COL, top - d * ROW)
        height = (max(rows, default=0) + 1) * ROW + (0.45 if caption else 0.0)
        if caption:
            self.boxes.append((caption, x - COL * 0.45, y + ROW * 0.25,
                               width * COL - COL * 0.1, height, "dashed"))
        return width * COL, height

    def _place_fold(self, layer, steps, drawn, blocks, x, y) -> tuple[float, float]:
        hidden = [t for t in steps if t not in drawn]
        n_nodes = sum(len(blocks[(layer, STEP, t)]) for t in hidden)
        fold_id = f"L{layer}.fold"
        node = Node(fold_id, "fold",
                    f"⋯ {len(hidden)} more steps ⋯\n(t={hidden[0]}…{hidden[-1]}, {n_nodes} nodes)")
        self._put(node, x, y - ROW * 1.5)
        for t in hidden:
            for n in blocks[(layer, STEP, t)]:
                self.alias[n.id] = fold_id
        return COL, ROW * 3

    def _put(self, node: Node, x: float, y: float) -> None:
        self.nodes[node.id] = node
        self.pos[node.id] = (x, y)
        self.alias[node.id] = node.id

    def drawn_as(self, node_id: str) -> str | None:
        """The drawn node that stands for ``node_id``, if any.

        Rolled, every step's node is drawn as the same op of the one step shown.
        """
        drawn = self.alias.get(node_id)
        if drawn is None and self.rolled and node_id.startswith("L") and ".t" in node_id:
            block, suffix = node_id.split("/", 1)
            layer = block.split(".", 1)[0]
            drawn = self._rolled_step.get(layer)
            drawn = None if drawn is None else self.alias.get(f"{layer}.t{drawn}/{suffix}")
        return drawn

    def _mark_param_reuse(self) -> None:
        """Parameter edges go to the first drawn step only; a transpose names its weight.

        Wiring a shared weight to every step is what makes layouts explode;
        ``W_hh.T`` on each step's transpose says the same thing in place.
        """
        first_step = {}
        for n in self.nodes.values():
            if n.role == STEP and n.step is not None:
                first_step[n.layer] = min(first_step.get(n.layer, n.step), n.step)
        self._first_step = first_step
        preds = self.graph.preds
        for node in self.nodes.values():
            if node.label == "T":
                for src in preds.get(node.id, ()):
                    if src.startswith("param/"):
                        self.extra_label[node.id] = f"{short_param(src.split('/', 1)[1])}.T"

    def _caption(self, role: str, layer: int) -> str:
        return {PRE: "all steps at once", FUSED: f"layer {layer}: fused"}[role]

    def _step_caption(self, layer: int, t: int) -> str:
        prefix = f"L{layer} · " if self.graph.meta.get("num_layers", 1) > 1 else ""
        if self.rolled:
            return f"{prefix}each step (× {self.graph.meta.get('seq_len')})"
        return f"{prefix}t = {t}"

    # -- output ------------------------------------------------------------
    def edges(self) -> list[tuple[str, str, bool]]:
        """(src, dst, recurrent) between drawn nodes, each once."""
        out: dict[tuple[str, str], bool] = {}
        nodes = self.graph.by_id
        if self.folded:  # edges may end in folded nodes: look at them all
            pairs = self.graph.edges
        else:  # every edge ends in a drawn node or in one drawn as it (rolled)
            preds = self.graph.preds
            pairs = [(src, dst) for dst in self._sources_of_drawn() for src in preds.get(dst, ())]
        for src, dst in pairs:
            a, b = self.drawn_as(src), self.drawn_as(dst)
            if a is None or b is None or a == b:
                continue
            if src.startswith("param/"):
                target = self.nodes.get(b)
                if target is not None and target.role == STEP \
                        and target.step != self._first_step.get(target.layer):
                    continue
            ns, nd = nodes.get(src), nodes.get(dst)
            recurrent = (ns is not None and nd is not None and ns.role == STEP == nd.role
                         and ns.layer == nd.layer and ns.step != nd.step)
            if recurrent and self.rolled:
                loop = f"L{nd.layer}.loop"
                out.setdefault((a, loop), True)
                out.setdefault((loop, b), True)
            else:
                out.setdefault((a, b), recurrent)
        return [(a, b, r) for (a, b), r in out.items()]

    def _sources_of_drawn(self) -> list[str]:
        """Ids whose incoming edges can show: drawn nodes, and in the rolled view
        the step-1 nodes they stand for plus the step before (the recurrence)."""
        ids = [i for i in self.pos if i in self.graph.by_id]
        if self.rolled:
            extra = []
            for i in ids:
                n = self.graph.by_id[i]
                if n.role == STEP and n.step is not None and n.step > 0:
                    extra.append(f"L{n.layer}.t{n.step - 1}/{i.split('/', 1)[1]}")
            ids += [i for i in extra if i in self.graph.by_id]
        return ids

    def to_dot(self, caption: str) -> str:
        return write_dot(self.statements(caption))

    def statements(self, caption: str):
        """The DOT statements of this picture: (kind, name or (a, b), attrs) in order."""
        yield "graph", None, dict(
            layout="neato", splines="false", bgcolor="transparent", fontname=FONT, fontsize="13",
            fontcolor=MUTED, label=caption, labelloc="t", labeljust="l", pad="0.2")
        # No outputorder=edgesfirst: it breaks the browser's redraw (d3-graphviz
        # throws "undefined" and keeps the old picture when the slider moves).
        # No rounded corners anywhere: the browser redraws a rounded box as a long
        # path, and with them an update of a 50-node graph took 2.5-3 s instead of 0.3 s.
        yield "node", None, dict(
            fontname=FONT, fontsize="12", fontcolor=TEXT, style="filled", shape="box",
            color="#555555", penwidth="1", margin="0.08,0.04", height="0.4")
        yield "edge", None, dict(color=EDGE, arrowsize="0.6", penwidth="1")
        for i, (label, x, y, w, h, style) in enumerate(self.boxes):
            yield "N", f"box{i}", dict(
                label="", pos=f"{x + w / 2:.2f},{y - h / 2:.2f}!", shape="box", style=style,
                color=MUTED, fixedsize="true", width=f"{w:.2f}", height=f"{h:.2f}")
            yield "N", f"caption{i}", dict(
                label=label, pos=f"{x + 0.1 + 0.045 * len(label):.2f},{y - 0.17:.2f}!",
                shape="plaintext", style="", fontcolor=MUTED, fontsize="12", width="0",
                height="0", margin="0", fixedsize="false")
        for node_id, (x, y) in self.pos.items():
            yield "N", node_id, {**self._node_attrs(self.nodes[node_id]), "pos": f"{x:.2f},{y:.2f}!"}
        for a, b, recurrent in self.edges():
            yield "E", (a, b), (dict(color=RECURRENT, style="dashed" if self.rolled else "solid",
                                     penwidth="1.4") if recurrent else {})

    def _node_attrs(self, n: Node) -> dict[str, str]:
        label = self.extra_label.get(n.id, n.label)
        if n.shape is not None:
            label += "\n" + ("×".join(map(str, n.shape)) if n.shape else "scalar")
        tooltip = f"{n.id}"
        if n.op:
            tooltip += f" | {n.op}"
        if n.shape is not None:
            tooltip += f" | shape {tuple(n.shape)}"
        attrs = {"label": label, "tooltip": tooltip}
        if n.kind in ("fold", "loop"):
            attrs.update(style="dashed", color=RECURRENT if n.kind == "loop" else MUTED,
                         fontcolor=MUTED)
        elif n.kind == "op" and n.role == FUSED:
            attrs["fillcolor"] = FILL["fused"]
        else:
            attrs["fillcolor"] = FILL.get(n.kind, FILL["op"])
        if n.kind in ("input", "output", "parameter"):
            attrs["penwidth"] = "2"  # data and weights: a heavier frame than ops
        return attrs


# -- DOT text ----------------------------------------------------------------
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


def write_dot(statements, name: str = "autograd") -> str:
    """DOT source from ``statements()``: graph/node/edge defaults, then N(odes) and E(dges)."""
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
