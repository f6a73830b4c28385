"""The one DOT writer: a Picture, or any statements, as Graphviz source.

``write_dot`` pins every position of a ``Picture`` (``neato`` with ``pos="x,y!"``), so
Graphviz only draws what the layout placed (``stockdemo.layout.views``); ``write_statements`` writes the
statements of any graph (the FX graphs of stockdemo/static_graphs/ too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from stockdemo import theme
from stockdemo.graph import Graph
from stockdemo.i18n import english
from stockdemo.layout.picture import FONT, FONT_SIZE, INCH, Picture, PlacedNode
from stockdemo.layout.steps import MAX_DRAWN_NODES
from stockdemo.layout.views import picture_of_graph

TEXT = theme.TEXT
MUTED = theme.MUTED
EDGE = theme.GRAPH_EDGE
RECURRENT = theme.RECURRENT


@dataclass(frozen=True)
class Rendering:
    dot: str
    view: str  # "unrolled" or "rolled": what was drawn
    drawn_nodes: int
    folded_steps: int  # unrolled only: middle steps folded into one box
    caption: str


def render_dot(graph: Graph, view: str = "auto") -> Rendering:
    """Graph -> DOT with pinned positions (a tagged graph's: time across, layers down; past
    ``MAX_DRAWN_NODES``, the middle steps folded, which Graphviz needs)."""
    picture = picture_of_graph(graph, view, max_nodes=MAX_DRAWN_NODES, complete=False)
    return Rendering(write_dot(picture), picture.view, len(picture.nodes), picture.folded_steps,
                     english(picture.caption))


def dot_statements(picture: Picture) -> Iterator[tuple[str, object, dict[str, str]]]:
    """The DOT statements of a picture, in order: (kind, name or (a, b), attrs).

    Positions are pinned in inches with y up, as Graphviz reads them.
    """
    yield "graph", None, dict(
        layout="neato", splines="false", bgcolor="transparent", fontname=FONT, fontsize="13",
        fontcolor=MUTED, label=english(picture.caption), labelloc="t", labeljust="l", pad="0.2")
    # No outputorder=edgesfirst: it breaks the browser's redraw (d3-graphviz
    # throws "undefined" and keeps the old picture when the slider moves).
    # No rounded corners anywhere: the browser redraws a rounded box as a long,
    # slow path.
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
            label=english(f.label), pos=f"{x + 0.1 + 0.045 * len(english(f.label)):.2f},{y - 0.17:.2f}!",
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
    attrs = {"label": english(p.label), "tooltip": tooltip}
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


# Written here rather than through the graphviz package, whose per-node checks and
# quoting were half of each render; the output is the package's, byte for byte
# (tests/test_dot_writer.py).

_BARE_ID = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)")
_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


@lru_cache(maxsize=8192)  # colours, styles, ids: the same few hundred texts in every render
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
