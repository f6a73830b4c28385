"""A sandbox run's graph drawn with today's layout: each loop iteration of the learner's code a step.

The Playground's layout (``stockdemo.render.layout``) places steps across and
layers down. A learner's graph has no such shape, so until the general
layered layout lands, ``as_graph`` maps code_graph's record onto it: the
innermost loop around a node's line gives its step, the loop around that its
layer; nodes made outside any loop go before the steps (``pre``) or after
them (``head``). A script without a Python loop (the seed: ``nn.RNN`` loops
in C++) is one block laid out by depth. The command line's ``--format dot``
and ``html`` draw this.
"""

from __future__ import annotations

from stockdemo.graph import HEAD, OUTPUT_ID, PRE, STEP, Graph, Node, op_name
from stockdemo.render import layout, short_param, write_dot

LEAF_LABEL = "leaf"


def as_graph(raw: dict) -> Graph:
    """code_graph.raw_graph's record -> a Graph the time × layer layout can place."""
    raw_nodes = raw["nodes"]
    ids = [f"n{i}" for i in range(len(raw_nodes))]
    # Creation order (leaves first): the layout reads a block's nodes in a topological order.
    order = sorted(range(len(raw_nodes)), key=lambda i: -1 if raw_nodes[i]["seq"] is None
                   else raw_nodes[i]["seq"])
    steps: dict[tuple[int, int], int] = {}  # (loop line, iteration) -> step, in order of appearance
    seen_loop = False
    nodes = []
    for i in order:
        node = raw_nodes[i]
        shape = tuple(node["shape"]) if node["shape"] is not None else None
        if node["kind"] != "op":
            name = node["param"] or LEAF_LABEL
            nodes.append(Node(ids[i], "parameter", short_param(name) if "." in name else name,
                              "AccumulateGrad", name, shape))
            continue
        loops = node["loops"]
        layer, step = (0 if not seen_loop else None), None
        if loops:
            seen_loop = True
            step = steps.setdefault((loops[-1][1], loops[-1][2]), len(steps))
            layer = loops[-2][2] if len(loops) > 1 else 0
        role = STEP if step is not None else (PRE if layer is not None else HEAD)
        nodes.append(Node(ids[i], "op", op_name(node["op"]), node["op"], None, shape, layer, step, role))
    nodes.append(Node(OUTPUT_ID, "output", "predictions", shape=tuple(raw["output_shape"])))
    edges = [(ids[src], ids[dst]) for src, dst in raw["edges"]]
    if raw_nodes:
        edges.append((ids[0], OUTPUT_ID))
    return Graph(tuple(nodes), tuple(edges), {"unrolled": bool(steps), "seq_len": len(steps)})


def graph_dot(raw: dict) -> str:
    """The run's graph as DOT, every node placed (``as_graph``)."""
    return write_dot(layout(as_graph(raw), "unrolled", max_nodes=None), "your_code")


def graph_html(raw: dict, source: str, facts: list[tuple[str, str]]) -> str:
    """The run's graph as the offline handout: one HTML file, the code folded under it."""
    from stockdemo.handout import handout_html

    return handout_html(layout(as_graph(raw), "unrolled", max_nodes=None), None,
                        title="Autograd graph of your code",
                        about="The graph PyTorch recorded while your code ran once, in the sandbox.",
                        facts=facts, code=source)
