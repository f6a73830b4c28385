"""A graph view's nodes as a table: the view's text alternative, and its download.

One row per graph node drawn, with what the replay knows of it (forward and backward
order, gradient norm) when a Trace is given, and what a box drawing more than its own
node stands for. The interactive view (stockdemo/render/payload.py) shows the same nodes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockdemo.graph import op_name, shape_text
from stockdemo.i18n import N_, tr, trn
from stockdemo.layout.picture import Picture

if TYPE_CHECKING:
    import pandas as pd

    from stockdemo.replay.trace import Trace


# The columns' names, as the download and the app's table keep them; the handout's header says
# them in its language (msgids).
COLUMNS = (N_("id"), N_("op"), N_("shape"), N_("step"), N_("layer"), N_("order in forward"),
           N_("order in backward"), N_("gradient norm"), N_("stands for"))
WHOLE = ("step", "layer", "order in forward", "order in backward")  # whole numbers, or none


def node_rows(picture: Picture, trace: Trace | None = None) -> list[dict[str, object]]:
    """The drawn graph nodes as rows, plain Python (``COLUMNS`` as keys, the msgids; None where
    unknown), their words in the language spoken now.

    The handout writes these straight to HTML: a first DataFrame costs pandas 10-80 ms of
    imports, more than drawing a small model's graph in a notebook.
    """
    forward = backward = norm = {}
    if trace is not None:
        forward = {node_id: i + 1 for i, node_id in enumerate(trace.forward)}
        backward = {b.node_id: i + 1 for i, b in enumerate(trace.backward)}
        norm = {b.node_id: b.grad_norm for b in trace.backward} | dict(trace.param_grad_norms)
    rows = []
    for p in picture.nodes:
        n = p.node
        if n is None:
            continue
        rows.append({
            "id": n.id,
            "op": op_name(n.op) if n.kind == "op" else n.kind,
            "shape": None if n.shape is None else shape_text(n.shape),
            "step": n.step,
            "layer": n.layer,
            "order in forward": forward.get(n.id),
            "order in backward": backward.get(n.id),
            "gradient norm": norm.get(n.id),
            "stands for": None if p.id not in picture.stands_for else str(picture.stands_for[p.id]),
        })
    return rows


def node_table(picture: Picture, trace: Trace | None = None) -> pd.DataFrame:
    """The drawn graph nodes as rows: the view's text alternative.

    Columns: id, op, shape, step, layer, forward order, backward order,
    gradient norm (these three need a Trace), and what a box drawing more than
    its own node stands for (a rolled box: "200 nodes, one per time step, t 0…199").
    """
    import pandas as pd  # here, not at import: the notebook's show() and the handout never need it

    frame = pd.DataFrame(node_rows(picture, trace), columns=list(COLUMNS))
    for col in WHOLE:
        frame[col] = frame[col].astype("Int64")
    return frame


def node_table_alt(picture: Picture) -> str:
    """What ``node_table``'s rows are, counted as every other count is (``NodeCounts``), in the
    language spoken now."""
    rows = sum(1 for p in picture.nodes if p.node is not None)
    if rows == picture.counts.nodes:
        return tr("Table of the graph's {summary}, one row each", summary=picture.counts.summary())
    return trn("Table of the {n} box drawn for the graph's {summary}; the column '{column}' says which "
               "boxes draw several nodes", "Table of the {n} boxes drawn for the graph's {summary}; the "
               "column '{column}' says which boxes draw several nodes", rows,
               summary=picture.counts.summary(), column=tr("stands for"))
