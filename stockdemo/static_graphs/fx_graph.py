"""An FX graph, as dynamo or export hands it over, turned into plain data and DOT.

``StaticGraph`` is what the page shows of a static capture: its ops with their
output shapes, and the printed code. ``fx_dot`` draws it through the app's one DOT
writer (stockdemo/render/dot.py).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import fx

from stockdemo import theme
from stockdemo.i18n import tr
from stockdemo.render.dot import write_statements

# Dynamo's config and counters are process-wide, and every Streamlit session runs
# in this one process: one trace or export at a time. Nothing here resets dynamo as a
# whole: each CompileSession's graphs live on a code object of its own.
DYNAMO_LOCK = threading.Lock()

MAX_DRAWN_FX_NODES = 120  # past this the FX graph is shown as code only


@dataclass(frozen=True)
class FxOp:
    """One node of an FX graph, as plain data."""

    name: str
    kind: str  # "input" | "parameter" | "op" | "branch" (a torch.cond subgraph) | "output"
    label: str  # e.g. "torch.rnn_tanh", "rnn.weight_ih_l0", "x"
    shape: str  # e.g. "(10, 5, 10)"; "" where the node holds no tensor
    inputs: tuple[str, ...]  # names of the nodes it reads


@dataclass(frozen=True)
class StaticGraph:
    """An FX graph captured by dynamo or export, and its printed code."""

    ops: tuple[FxOp, ...]
    code: str

    @property
    def op_count(self) -> int:
        return sum(op.kind == "op" for op in self.ops)

    @property
    def ops_by_type(self) -> dict[str, int]:
        return dict(Counter(op.label for op in self.ops if op.kind == "op").most_common())

    def input_shape(self) -> str:
        return next((op.shape for op in self.ops if op.kind == "input"), "")


def static_graph(gm: fx.GraphModule, meta_key: str, placeholder_names: Sequence[str]) -> StaticGraph:
    """An FX GraphModule -> plain data. Placeholders are named in order by ``placeholder_names``."""
    names = iter(placeholder_names)
    ops = []
    for node in gm.graph.nodes:
        inputs = tuple(n.name for n in node.all_input_nodes)
        shape = _shape(node.meta.get(meta_key))
        if node.op == "placeholder":
            label = next(names, node.name)
            kind = "input" if label in ("x", "l_x_") else "parameter"
            ops.append(FxOp(node.name, kind, label, shape, inputs))
        elif node.op == "output":
            ops.append(FxOp(node.name, "output", "output", shape, inputs))
        elif node.op == "get_attr":
            ops.append(FxOp(node.name, "branch", str(node.target), shape, inputs))
        else:
            ops.append(FxOp(node.name, "op", _target_label(node), shape, inputs))
    return StaticGraph(tuple(ops), gm.code.strip())


def _target_label(node: fx.Node) -> str:
    target = node.target
    if not callable(target):
        return str(target)
    if isinstance(target, torch._ops.OpOverload | torch._ops.HigherOrderOperator):
        return str(target).removesuffix(".default")
    name = fx.node._get_qualified_name(target)
    name = name.removeprefix("_operator.").replace("torch._C._nn.", "F.")
    if name == "getitem" and len(node.args) > 1:
        return f"getitem [{_index(node.args[1])}]"
    return name


def _index(index: object) -> str:
    if isinstance(index, tuple):
        return ", ".join(_index(i) for i in index)
    if isinstance(index, slice):
        return ":" if index == slice(None) else f"{index.start}:{index.stop}"
    return str(index)


def _shape(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return str(tuple(value.shape))
    if isinstance(value, (tuple, list)):
        parts = [_shape(v) for v in value]
        return ", ".join(p for p in parts if p)
    return ""


def fx_dot(graph: StaticGraph) -> str:
    """A static FX graph as top-down DOT, through the app's one DOT writer.

    Parameters are drawn once per use (no hub wired to every step), so
    Graphviz's ``dot`` layout stays fast on these small graphs.
    """
    return write_statements(fx_statements(graph), "fx")


def fx_statements(graph: StaticGraph) -> Iterator[tuple[str, object, dict[str, str]]]:
    """``write_statements``'s statements: defaults, then each op and each parameter use with its edges."""
    yield "graph", None, {"rankdir": "TB", "nodesep": "0.25", "ranksep": "0.3", "bgcolor": "transparent"}
    yield "node", None, {"shape": "box", "style": "filled", "fontname": theme.FONT_FAMILY, "fontsize": "12",
                         "fontcolor": theme.TEXT, "color": theme.BORDER, "penwidth": "0.8"}
    yield "edge", None, {"color": theme.GRAPH_EDGE, "arrowsize": "0.6"}
    kinds = {op.name: op for op in graph.ops}
    for op in graph.ops:
        if op.kind == "parameter":
            continue
        label = op.label if not op.shape else f"{op.label}\\n{op.shape}"
        yield "N", op.name, {"label": label, "fillcolor": theme.GRAPH_FILL.get(op.kind, "#FFFFFF")}
        for src in op.inputs:
            if kinds[src].kind == "parameter":
                use = f"{src}@{op.name}"
                yield "N", use, {"label": kinds[src].label, "fillcolor": theme.GRAPH_FILL["parameter"],
                                 "fontsize": "10", "shape": "note"}
                yield "E", (use, op.name), {}
            else:
                yield "E", (src, op.name), {}


def drawn_node_count(graph: StaticGraph) -> int:
    """Nodes ``fx_dot`` would draw: every non-parameter node plus one box per parameter use."""
    params = {op.name for op in graph.ops if op.kind == "parameter"}
    return sum(op.kind != "parameter" for op in graph.ops) + sum(
        src in params for op in graph.ops for src in op.inputs)


def ops_table(graph: StaticGraph) -> list[dict[str, str]]:
    """The exported graph's inputs and ops, one row each, with their output shapes."""
    node, op_, shape = tr("node"), tr("op"), tr("output shape")
    return [{node: op.name, op_: op.label, shape: op.shape}
            for op in graph.ops if op.kind in ("input", "op", "branch")]
