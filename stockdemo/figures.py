"""Plotly figures and downloads drawn from a live run (no Streamlit here)."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from stockdemo import theme
from stockdemo.config import CELL_LABELS, RunConfig
from stockdemo.graph import Graph
from stockdemo.inspection import LOSS, Inspection
from stockdemo.live import RunResult

PALETTE = list(theme.PALETTE)
FONT = {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE, "color": theme.TEXT}
MAX_LINES = 8


class SharedFigure(go.Figure):
    """A figure built once per config and shown to every session: read it, never change it.

    ``to_dict`` is what ``st.plotly_chart`` calls on every rerun. Plotly's own
    deep-copies the figure, its theme template most of all (~4 ms); this one
    hands out the spec it was built from, with the template added, made once.
    """

    def __init__(self, spec: dict) -> None:
        super().__init__(spec, _validate=False)
        self._shared_spec = spec
        self._shared_dict: dict | None = None

    def to_dict(self) -> dict:
        if self._shared_dict is None:
            spec = self._shared_spec
            self._shared_dict = {"data": spec["data"], "layout": {
                **spec["layout"], "template": self.layout.template.to_plotly_json()}}
        return self._shared_dict


def _typed(values: np.ndarray) -> dict:
    """An array as plotly.js's typed-array spec, which is how plotly itself sends numpy arrays."""
    values = np.ascontiguousarray(values)
    return {"dtype": values.dtype.str.lstrip("<|="), "bdata": base64.b64encode(values.tobytes()).decode()}


def _figure(data: list[dict], layout: dict, title: str, height: int = 380) -> SharedFigure:
    """A figure from specs written in plotly's canonical form, not re-checked here.

    Plotly checks every property as a figure is built; for the predictions
    chart that took ~25 ms, a third of the server's time per Playground rerun
    under load. The specs below are written the way plotly's checker would
    leave them, and tests/test_figures.py holds each one to that checker.
    """
    layout = {"title": {"text": title}, "height": height,
              "margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "colorway": PALETTE,
              "legend": {"orientation": "h", "y": -0.2}, "font": dict(FONT), **layout}
    return SharedFigure({"data": data, "layout": layout})


def predictions_figure(result: RunResult) -> SharedFigure:
    """Each input window's first feature over time, and the model's prediction after it."""
    x = result.inputs[:, :, 0].numpy()  # (batch, seq_len)
    pred = result.predictions[:, 0].numpy()  # (batch,)
    seq_len = x.shape[1]
    shown = min(MAX_LINES, x.shape[0])
    colours = [PALETTE[b % len(PALETTE)] for b in range(shown)]
    steps = list(range(seq_len))
    data = [{"type": "scatter", "x": steps, "y": _typed(x[b]), "mode": "lines",
             "line": {"color": colours[b], "width": 2}, "name": f"sequence {b}",
             "hovertemplate": "t=%{x}: %{y:.3f}"} for b in range(shown)]
    # one trace for all predictions: fewer traces keep this figure cheap to draw
    data.append({"type": "scatter", "x": [seq_len] * shown, "y": _typed(pred[:shown]), "mode": "markers",
                 "name": "predictions",
                 "marker": {"color": colours, "size": 14, "symbol": "star",
                            "line": {"width": 1, "color": theme.BORDER}}})
    more = f", first {shown} of {x.shape[0]} shown" if shown < x.shape[0] else ""
    # No legend: the colours pair each line with its star, and a legend is the
    # costliest part of redrawing this chart on every slider move.
    return _figure(data, {
        "xaxis": {"title": {"text": "time step t (the stars are the predictions for step T)"},
                  "dtick": max(1, seq_len // 10)},
        "yaxis": {"title": {"text": "feature 0 (input) / prediction"}},
        "showlegend": False,
    }, f"Input windows and predictions{more}")


def ops_figure(ops: pd.DataFrame) -> SharedFigure:
    """ops: columns op, count (most frequent first)."""
    counts = [int(c) for c in ops["count"]]
    data = [{"type": "bar", "x": counts, "y": list(ops["op"]), "orientation": "h",
             "marker": {"color": PALETTE[0]}, "text": [str(c) for c in counts],
             "textposition": "auto"}]
    return _figure(data, {"yaxis": {"autorange": "reversed"}, "xaxis": {"title": {"text": "nodes"}}},
                   "Autograd nodes by op", height=max(260, 30 * len(ops) + 90))


def size_figure(sweep: list[dict[str, int]], config: RunConfig, nodes_now: int) -> SharedFigure:
    """Graph nodes against T (measured), with this run marked."""
    data = [
        {"type": "scatter", "x": [r["seq_len"] for r in sweep], "y": [r["nodes"] for r in sweep],
         "mode": "lines+markers", "name": "nodes (measured)",
         "line": {"color": PALETTE[0], "width": 3}},
        {"type": "scatter", "x": [config.seq_len], "y": [nodes_now], "mode": "markers",
         "marker": {"size": 16, "color": PALETTE[5], "symbol": "diamond"},
         "name": f"this run: T={config.seq_len}"},
    ]
    return _figure(data, {"xaxis": {"title": {"text": "sequence length T"}},
                          "yaxis": {"title": {"text": "graph nodes"}, "rangemode": "tozero"}},
                   f"Graph size against T: {CELL_LABELS[config.cell]}, "
                   f"{config.num_layers} layer{'s' if config.num_layers > 1 else ''}")


def ops_table(graph: Graph) -> pd.DataFrame:
    """The graph's autograd nodes by op: columns op, count, most frequent first."""
    return pd.DataFrame(list(graph.stats["ops_by_type"].items()), columns=["op", "count"])


def ops_alt(ops: pd.DataFrame) -> str:
    return "Bar chart of autograd nodes by op: " + ", ".join(f"{r.op} {r.count}" for r in ops.itertuples())


def predictions_alt(config: RunConfig) -> str:
    return (f"Line chart: the first feature of {min(MAX_LINES, config.batch_size)} input windows "
            f"over {config.seq_len} steps, each window's prediction a star.")


def size_alt(sweep: list[dict[str, int]]) -> str:
    return "Line chart of graph nodes against sequence length: " + ", ".join(
        f"T {r['seq_len']}: {r['nodes']}" for r in sweep)


def size_caption(sweep: list[dict[str, int]], config: RunConfig, fused: bool) -> str:
    """What the size sweep shows: flat for the fused LSTM, else how many nodes one step adds."""
    if fused:
        return "Flat: the fused LSTM kernel records one node per layer whatever T is."
    growth = (sweep[-1]["nodes"] - sweep[1]["nodes"]) / (sweep[-1]["seq_len"] - sweep[1]["seq_len"])
    return (f"A straight line: each extra time step adds {growth:.0f} nodes "
            f"({growth / config.num_layers:.0f} per layer). Measured live at batch 1, "
            "hidden 4: the graph's size does not depend on those.")


def graph_json(graph: Graph) -> str:
    return json.dumps(graph.to_dict(), indent=1)


def predictions_csv(result: RunResult) -> str:
    """One row per sequence in the batch: its prediction and its inputs' last step."""
    last = result.inputs[:, -1, :].numpy()
    df = pd.DataFrame({"sequence": range(result.predictions.shape[0]),
                       "prediction": result.predictions[:, 0].numpy()})
    for f in range(last.shape[1]):
        df[f"last_step_feature_{f}"] = last[:, f]
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue()


def hidden_heatmap(run: Inspection) -> go.Figure:
    """Sequence 0's hidden state, unit by time step, one panel per layer, red positive, blue negative."""
    config = run.config
    T, L = config.seq_len, config.num_layers
    fig = make_subplots(rows=L, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=[f"layer {layer}" for layer in range(L)])
    limit = max(float(abs(h).max()) for h in run.hidden) or 1.0
    for layer, h in enumerate(run.hidden):  # h: (T, hidden)
        fig.add_trace(go.Heatmap(z=h.T, x=list(range(T)), y=list(range(h.shape[1])),
                                 colorscale="RdBu_r", zmin=-limit, zmax=limit, zmid=0,
                                 showscale=layer == 0, colorbar=dict(title="h"),
                                 hovertemplate="t=%{x}, unit %{y}: %{z:.3f}<extra></extra>"),
                      row=layer + 1, col=1)
        fig.update_yaxes(title="unit", row=layer + 1, col=1)
    fig.update_xaxes(title="time step t", row=L, col=1)
    fig.update_layout(title=f"Hidden state h_t of sequence 0 (T = {T}, hidden = {config.hidden_size})",
                      height=170 + 150 * L + min(config.hidden_size, 64) * 2 * L,
                      margin=dict(l=10, r=10, t=70, b=10), font=FONT)
    return fig


def gradient_figure(run: Inspection) -> go.Figure:
    """‖∂L/∂h_t‖ against t, one line per layer, on a log scale."""
    T = run.config.seq_len
    fig = go.Figure()
    for layer, norms in enumerate(run.grad_norms):
        fig.add_trace(go.Scatter(x=list(range(T)), y=norms, mode="lines+markers", name=f"layer {layer}",
                                 line=dict(color=PALETTE[layer % len(PALETTE)], width=3)))
    fig.update_yaxes(type="log", title="‖∂L/∂h_t‖ (log scale)", exponentformat="power")
    fig.update_xaxes(title=f"time step t (T = {T})", range=[-0.5, T - 0.5])
    fig.update_layout(title=f"Gradient of L = {LOSS} at each step's hidden state",
                      height=400, margin=dict(l=10, r=10, t=60, b=10), font=FONT,
                      legend=dict(orientation="h", y=-0.25))
    return fig
