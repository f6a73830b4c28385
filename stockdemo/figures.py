"""Plotly figures and downloads drawn from a live run (no Streamlit here)."""

from __future__ import annotations

import io
import json

import pandas as pd
import plotly.graph_objects as go

from stockdemo.config import CELL_LABELS, RunConfig
from stockdemo.graph import Graph
from stockdemo.live import RunResult

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
MAX_LINES = 8


def _layout(fig: go.Figure, title: str, height: int = 380) -> go.Figure:
    fig.update_layout(title=title, height=height, margin=dict(l=10, r=10, t=50, b=10),
                      colorway=PALETTE, legend=dict(orientation="h", y=-0.2), font=dict(size=14))
    return fig


def predictions_figure(result: RunResult) -> go.Figure:
    """Each input window's first feature over time, and the model's prediction after it."""
    x = result.inputs[:, :, 0].numpy()  # (batch, seq_len)
    pred = result.predictions[:, 0].numpy()  # (batch,)
    seq_len = x.shape[1]
    shown = min(MAX_LINES, x.shape[0])
    colours = [PALETTE[b % len(PALETTE)] for b in range(shown)]
    fig = go.Figure()
    for b in range(shown):
        fig.add_trace(go.Scatter(x=list(range(seq_len)), y=x[b], mode="lines",
                                 line=dict(color=colours[b], width=2), name=f"sequence {b}",
                                 hovertemplate="t=%{x}: %{y:.3f}"))
    # one trace for all predictions: fewer traces keep this figure cheap to build
    fig.add_trace(go.Scatter(x=[seq_len] * shown, y=pred[:shown], mode="markers", name="predictions",
                             marker=dict(color=colours, size=14, symbol="star",
                                         line=dict(width=1, color="#333"))))
    fig.update_xaxes(title="time step t (the stars are the predictions for step T)",
                     dtick=max(1, seq_len // 10))
    fig.update_yaxes(title="feature 0 (input) / prediction")
    more = f", first {shown} of {x.shape[0]} shown" if shown < x.shape[0] else ""
    # No legend: the colours pair each line with its star, and a legend is the
    # costliest part of redrawing this chart on every slider move.
    fig.update_layout(showlegend=False)
    return _layout(fig, f"Input windows and predictions{more}")


def ops_figure(ops: pd.DataFrame) -> go.Figure:
    """ops: columns op, count (most frequent first)."""
    fig = go.Figure(go.Bar(x=ops["count"], y=ops["op"], orientation="h", marker_color=PALETTE[0],
                           text=ops["count"], textposition="auto"))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title="nodes")
    return _layout(fig, "Autograd nodes by op", height=max(260, 30 * len(ops) + 90))


def size_figure(sweep: list[dict[str, int]], config: RunConfig, nodes_now: int) -> go.Figure:
    """Graph nodes against T (measured), with this run marked."""
    df = pd.DataFrame(sweep)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=df["seq_len"], y=df["nodes"], mode="lines+markers",
                             name="nodes (measured)", line=dict(color=PALETTE[0], width=3)))
    fig.add_trace(go.Scatter(x=[config.seq_len], y=[nodes_now], mode="markers",
                             marker=dict(size=16, color=PALETTE[5], symbol="diamond"),
                             name=f"this run: T={config.seq_len}"))
    fig.update_xaxes(title="sequence length T")
    fig.update_yaxes(title="graph nodes", rangemode="tozero")
    return _layout(fig, f"Graph size against T: {CELL_LABELS[config.cell]}, "
                        f"{config.num_layers} layer{'s' if config.num_layers > 1 else ''}")


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
