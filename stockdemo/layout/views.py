"""The one choice of layout: a graph tagged with steps and layers is drawn as time steps x layers,
any other by its code.

A record whose nodes carry their layer, time step and role (its ``tags``:
``stockdemo.graph.capture``, the Playground's model) becomes a Graph with ``meta["tagged"]``;
``stockdemo.layout.steps`` draws it, time across and layers down. Any other record (a learner's
code, a notebook's model) is drawn by its code (``stockdemo.layout.by_code``): its loops'
iterations side by side.
"""

from __future__ import annotations

from stockdemo.graph import Graph
from stockdemo.layout.picture import Picture
from stockdemo.layout.steps import NODE_BUDGET, layout


def picture_of_graph(graph: Graph, view: str = "auto", *, budget: int = NODE_BUDGET,
                     unroll: frozenset[str] = frozenset(), max_nodes: int | None = None,
                     complete: bool = True) -> Picture:
    """``graph`` laid out for ``view`` ("auto", "rolled" or "unrolled"), every node placed.

    A tagged graph (``stockdemo.layout.steps.layout``): ``max_nodes``, fold the middle steps
    past that many nodes (None: never; the DOT writer's Graphviz needs it); ``complete``, as
    ``layout``'s. Any other (``stockdemo.layout.by_code.layout_code``): ``budget``, the nodes
    "auto" draws unrolled; ``unroll``, the rolled boxes drawn unrolled anyway.
    """
    if graph.meta.get("tagged"):
        return layout(graph, view, max_nodes, complete)
    # Imported on the first code graph: igraph costs a process 8.5 MB and 90 ms, which a server
    # that only ever draws the Playground never needs.
    from stockdemo.layout.by_code import layout_code

    return layout_code(graph, view, budget, unroll)
