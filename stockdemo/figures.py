"""Plotly figures and downloads drawn from a live run (no Streamlit here).

A figure is shared by every session (``stockdemo/ui/caches.py``), so its words are Messages
(``i18n.later``): a ``SharedFigure`` (``stockdemo/shared_figure.py``) says them in the language
of the session drawing it.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from stockdemo import theme
from stockdemo.cells import CELL_LABELS
from stockdemo.config import RunConfig
from stockdemo.graph import Graph
from stockdemo.i18n import N_, Message, later, later_n, tr
from stockdemo.i18n import number as written
from stockdemo.live.inspection import LOSS, Inspection
from stockdemo.live.run import RunResult
from stockdemo.shared_figure import SharedFigure, typed_array
from stockdemo.train.training import Progress, TrainResult, forecaster_name
from stockdemo.train.windows import WARMUP, Dataset

PALETTE = list(theme.PALETTE)
FONT = {"family": theme.FONT_FAMILY, "size": theme.FONT_SIZE, "color": theme.TEXT}
MAX_LINES = 8


# Where a chart's words go, so that none is printed over another at any width, from a
# 390 px phone to a projector (tests/browser/test_chart_collisions_browser.py reads them back):
# - the title at the top left, in a line of its own under the strip where plotly's mode bar
#   appears (on hover, or a tap on a phone), a detail in plotly's subtitle instead of a
#   longer title, which runs off a phone;
# - the legend under everything else, anchored to the figure's bottom (anchored to the
#   plot, the x axis's title is printed over it);
# - every axis pushing the margins out for its tick labels and title (automargin).
# The offsets below are where Chromium draws them, under the mode bar's buttons
# (docs/decisions.md has the measurement).
MODE_BAR_PX = 36
TITLE_PX = 24
SUBTITLE_PX = 32


def frame(title: str | Message, height: int, subtitle: str | Message = "", legend: bool = True,
          above_plot: int = 0) -> dict:
    """The layout keys that place a figure's title, subtitle and legend, and its height (see above).

    ``above_plot``: pixels more between the title and the plot, for labels drawn there.
    """
    top = MODE_BAR_PX + TITLE_PX + (SUBTITLE_PX if subtitle else 0) + above_plot
    heading = {"text": title, "x": 0, "xanchor": "left", "xref": "paper", "y": 1 - MODE_BAR_PX / height,
               "yanchor": "top", "yref": "container", "font": {"size": theme.TITLE_SIZE}}
    if subtitle:
        heading["subtitle"] = {"text": subtitle, "font": {"size": theme.FONT_SIZE - 2}}
    layout = {"title": heading, "margin": {"l": 10, "r": 10, "t": top, "b": 10, "autoexpand": True},
              "height": height}
    if legend:
        layout["legend"] = {"orientation": "h", "x": 0, "xanchor": "left", "xref": "container",
                            "y": 0, "yanchor": "bottom", "yref": "container"}
    return layout


def with_automargin(layout: dict) -> dict:
    """``layout`` with every axis set to push the margins for its labels and title."""
    return {key: ({**value, "automargin": True} if key.startswith(("xaxis", "yaxis")) else value)
            for key, value in layout.items()}


def _figure(data: list[dict], layout: dict, title: Message, height: int = 380, subtitle: Message | str = "",
            above_plot: int = 0) -> SharedFigure:
    """A figure from specs written in plotly's canonical form, not re-checked here.

    Plotly checks every property as a figure is built, a large share of the
    server's time per Playground rerun. The specs below are written the way plotly's checker would
    leave them, and tests/test_figures.py holds each one to that checker.
    """
    layout = {**frame(title, height, subtitle, layout.get("showlegend", True), above_plot),
              "colorway": PALETTE, "font": dict(FONT), **with_automargin(layout)}
    return SharedFigure({"data": data, "layout": layout})


def predictions_figure(result: RunResult) -> SharedFigure:
    """Each input window's first feature over time, and the model's prediction after it."""
    x = result.inputs[:, :, 0].numpy()  # (batch, seq_len)
    pred = result.predictions[:, 0].numpy()  # (batch,)
    seq_len = x.shape[1]
    shown = min(MAX_LINES, x.shape[0])
    colours = [PALETTE[b % len(PALETTE)] for b in range(shown)]
    steps = list(range(seq_len))
    data = [{"type": "scatter", "x": steps, "y": typed_array(x[b]), "mode": "lines",
             "line": {"color": colours[b], "width": 2}, "name": later("sequence {index}", index=str(b)),
             "hovertemplate": "t=%{x}: %{y:.3f}"} for b in range(shown)]
    # one trace for all predictions: fewer traces keep this figure cheap to draw
    data.append({"type": "scatter", "x": [seq_len] * shown, "y": typed_array(pred[:shown]), "mode": "markers",
                 "name": later("predictions"),
                 "marker": {"color": colours, "size": 14, "symbol": "star",
                            "line": {"width": 1, "color": theme.BORDER}}})
    more = (later("first {shown} of {count} windows shown", shown=shown, count=x.shape[0])
            if shown < x.shape[0] else "")
    # No legend: the colours pair each line with its star, and a legend is the
    # costliest part of redrawing this chart on every slider move.
    return _figure(data, {
        "xaxis": {"title": {"text": later("time step t (★: the prediction for step T)")},
                  "dtick": max(1, seq_len // 10)},
        "yaxis": {"title": {"text": later("feature 0 / prediction")}},
        "showlegend": False,
    }, later("Input windows and predictions"), subtitle=more)


def ops_figure(ops: pd.DataFrame) -> SharedFigure:
    """ops: columns op, count (most frequent first)."""
    counts = [int(c) for c in ops["count"]]
    data = [{"type": "bar", "x": counts, "y": list(ops["op"]), "orientation": "h",
             "marker": {"color": PALETTE[0]}, "text": [str(c) for c in counts],
             "textposition": "auto"}]
    return _figure(data, {"yaxis": {"autorange": "reversed"},
                          "xaxis": {"title": {"text": later("operations")}}},
                   later_n("The {n} operation autograd recorded", "The {n} operations autograd recorded",
                           sum(counts)), subtitle=later("by op"),
                   height=max(290, 30 * len(ops) + 130))


def size_figure(sweep: list[dict[str, int]], config: RunConfig, nodes_now: int) -> SharedFigure:
    """Graph nodes against T (measured), with this run marked."""
    data = [
        {"type": "scatter", "x": [r["seq_len"] for r in sweep], "y": [r["nodes"] for r in sweep],
         "mode": "lines+markers", "name": later("nodes (measured)"),
         "line": {"color": PALETTE[0], "width": 3}},
        {"type": "scatter", "x": [config.seq_len], "y": [nodes_now], "mode": "markers",
         "marker": {"size": 16, "color": PALETTE[5], "symbol": "diamond"},
         "name": later("this run: T={T}", T=config.seq_len)},
    ]
    return _figure(data, {"xaxis": {"title": {"text": later("sequence length T")}},
                          "yaxis": {"title": {"text": later("graph nodes")}, "rangemode": "tozero"}},
                   later_n("Graph size against T: {cell}, {n} layer",
                           "Graph size against T: {cell}, {n} layers", config.num_layers,
                           cell=later(CELL_LABELS[config.cell])))


def ops_table(graph: Graph) -> pd.DataFrame:
    """The graph's operations by op: columns op, count, most frequent first (parameter
    tensors, the input and the output are not operations: ``Graph.counts``)."""
    return pd.DataFrame(list(graph.stats["ops_by_type"].items()), columns=[N_("op"), N_("count")])


def ops_alt(ops: pd.DataFrame) -> str:
    return tr("Bar chart of the operations autograd recorded, by op: {ops}",
              ops=", ".join(f"{r.op} {written(r.count)}" for r in ops.itertuples()))


def predictions_alt(config: RunConfig) -> str:
    return tr("Line chart: the first feature of {windows} input windows over {steps} steps, each "
              "window's prediction a star.", windows=min(MAX_LINES, config.batch_size), steps=config.seq_len)


def size_alt(sweep: list[dict[str, int]]) -> str:
    return tr("Line chart of graph nodes against sequence length: {points}", points=", ".join(
        f"T {r['seq_len']}: {written(r['nodes'])}" for r in sweep))


def size_caption(sweep: list[dict[str, int]], config: RunConfig, fused: bool) -> str:
    """What the size sweep shows: flat for the fused LSTM, else how many nodes one step adds."""
    if fused:
        return tr("Flat: the fused LSTM kernel records one operation per layer whatever T is.")
    growth = (sweep[-1]["nodes"] - sweep[1]["nodes"]) / (sweep[-1]["seq_len"] - sweep[1]["seq_len"])
    return tr("A straight line: each extra time step adds {growth} nodes ({per_layer} per layer). Measured "
              "live at batch 1, hidden 4: the graph's size does not depend on those.",
              growth=round(growth), per_layer=round(growth / config.num_layers))


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


# Plotly's "RdBu_r", as its checker spells it out: red positive, blue negative.
_RED_BLUE = [[i / 10, c] for i, c in enumerate((
    "rgb(5,48,97)", "rgb(33,102,172)", "rgb(67,147,195)", "rgb(146,197,222)", "rgb(209,229,240)",
    "rgb(247,247,247)", "rgb(253,219,199)", "rgb(244,165,130)", "rgb(214,96,77)", "rgb(178,24,43)",
    "rgb(103,0,31)"))]
_PANEL_GAP = 0.1  # between the heatmap's stacked panels, as a share of the plot's height
LAYER_LABEL_PX = 24  # the "layer 0" label above the top panel


def hidden_heatmap(run: Inspection) -> SharedFigure:
    """Sequence 0's hidden state, unit by time step, one panel per layer, red positive, blue negative.

    The panels are laid out as plotly's ``make_subplots(rows=L, shared_xaxes=True)``
    would, written out: its checked path was most of the Debugging page's
    server time under load.
    """
    config = run.config
    T, L = config.seq_len, config.num_layers
    limit = max(float(abs(h).max()) for h in run.hidden) or 1.0
    panel = (1 - _PANEL_GAP * (L - 1)) / L
    data, layout, titles = [], {}, []
    for layer, h in enumerate(run.hidden):  # h: (T, hidden)
        n = "" if layer == 0 else str(layer + 1)
        top = 1 - layer * (panel + _PANEL_GAP)
        bottom = max(0.0, top - panel)
        data.append({"type": "heatmap", "z": typed_array(h.T), "x": list(range(T)),
                     "y": list(range(h.shape[1])), "colorscale": _RED_BLUE,
                     "zmin": -limit, "zmax": limit, "zmid": 0, "showscale": layer == 0,
                     "colorbar": {"title": {"text": "h"}},
                     "hovertemplate": later("t=%{x}, unit %{y}: %{z:.3f}<extra></extra>"),
                     "xaxis": f"x{n}", "yaxis": f"y{n}"})
        last = layer == L - 1
        layout[f"xaxis{n}"] = {"anchor": f"y{n}", "domain": [0.0, 1.0],
                               **({"title": {"text": later("time step t")}} if last else
                                  {"matches": f"x{L if L > 1 else ''}", "showticklabels": False})}
        layout[f"yaxis{n}"] = {"anchor": f"x{n}", "domain": [bottom, top], "title": {"text": later("unit")}}
        titles.append({"font": {"size": 16}, "showarrow": False,
                       "text": later("layer {index}", index=str(layer)),
                       "x": 0.5, "xanchor": "center", "xref": "paper", "y": top,
                       "yanchor": "bottom", "yref": "paper"})
    return _figure(data, {**layout, "annotations": titles, "showlegend": False},
                   later("Hidden state h_t of sequence 0"),
                   subtitle=later("T = {T}, hidden = {hidden}", T=T, hidden=config.hidden_size),
                   height=220 + 150 * L + min(config.hidden_size, 64) * 2 * L, above_plot=LAYER_LABEL_PX)


def gradient_figure(run: Inspection) -> SharedFigure:
    """‖∂L/∂h_t‖ against t, one line per layer, on a log scale."""
    T = run.config.seq_len
    data = [{"type": "scatter", "x": list(range(T)), "y": typed_array(np.asarray(norms)),
             "mode": "lines+markers", "name": later("layer {index}", index=str(layer)),
             "line": {"color": PALETTE[layer % len(PALETTE)], "width": 3}}
            for layer, norms in enumerate(run.grad_norms)]
    return _figure(data, {
        "yaxis": {"type": "log", "title": {"text": later("‖∂L/∂h_t‖ (log scale)")},
                  "exponentformat": "power"},
        "xaxis": {"title": {"text": later("time step t (T = {T})", T=T)}, "range": [-0.5, T - 0.5]},
    }, later("Gradient at each step's hidden state"), subtitle=later("of L = {loss}", loss=LOSS), height=420)


# --- Train and predict ---------------------------------------------------------

SERIES = theme.SERIES


def _train_figure(data: list[dict], layout: dict, title: Message, height: int,
                  subtitle: Message | str = "") -> SharedFigure:
    """A Train page figure in plotly's canonical form (see ``_figure``), dates on x, one hover for all."""
    return SharedFigure({"data": data, "layout": {
        **with_automargin(layout), **frame(title, height, subtitle), "font": dict(FONT),
        "hovermode": "x unified"}})


def _prices_spec(dataset: Dataset) -> tuple[list[dict], dict]:
    """The close over the whole period, validation and held-out test days shaded -> (data, layout).

    The shapes and labels are what plotly's ``add_vrect`` makes, written out:
    its axis bookkeeping was 43 % of the Train page's server time under load.
    """
    dates = dataset.dates
    val_start, test_start = dataset.target_day[[dataset.n_train, dataset.n_train + dataset.n_val]]
    spans = ((val_start, test_start, SERIES["val_region"], later("validation days")),
             (test_start, len(dates) - 1, SERIES["test_region"], later("test days (held out)")))
    data = [{"type": "scatter", "x": dates, "y": typed_array(dataset.close[WARMUP:]), "mode": "lines",
             "name": later("actual close"), "line": {"color": SERIES["actual"], "width": 1.5}}]
    # The spans are named in the legend: a label drawn in the plot sat on the price line.
    layout = {
        "shapes": [{"type": "rect", "xref": "x", "yref": "y domain", "x0": dates[start],
                    "x1": dates[end], "y0": 0, "y1": 1, "fillcolor": colour, "opacity": 0.18,
                    "line": {"width": 0}, "name": label, "showlegend": True}
                   for start, end, colour, label in spans],
        "xaxis": {"title": {"text": later("date")}}, "yaxis": {"title": {"text": later("close")}},
    }
    return data, layout


def prices_figure(dataset: Dataset, title: str | Message, height: int = 420) -> SharedFigure:
    """Close over the whole period, the validation and held-out test days shaded.

    ``title``: a Message, or a msgid (said in the reader's language, like a Message).
    """
    said = title if isinstance(title, Message) else later(title)
    return _train_figure(*_prices_spec(dataset), said, height)


# The title stockdemo/ui/caches.py gives the Train page's data chart (a msgid).
DATA_TITLE = N_("The data, split by time")


def forecast_figure(dataset: Dataset, result: TrainResult) -> SharedFigure:
    """prices_figure plus next-day forecasts on the test days, opened on the test days."""
    data, layout = _prices_spec(dataset)
    f = result.forecasts
    days = f.index.to_numpy()
    for column, name, line, more in (
            # the model wide and faint, persistence dotted on top: where a model of returns
            # predicts no move they are one line, and both stay in sight (train.report.overlap_note says so)
            ("model", later("model forecast"), {"width": 5}, {"opacity": 0.55}),
            ("persistence", forecaster_name("persistence"), {"width": 2, "dash": "dot"}, {}),
            ("moving_average", forecaster_name("moving_average"), {"width": 1.5, "dash": "dash"},
             {"visible": "legendonly"})):
        data.append({"type": "scatter", "x": days, "y": typed_array(f[column].to_numpy()),
                     "mode": "lines", "name": name, "line": {"color": SERIES[column], **line}, **more})
    # Open on the test days with some context; double-click zooms out to all of history.
    test_days = dataset.target_day[dataset.part("test")]
    first = max(0, int(test_days[0]) - len(test_days) // 2)
    shown = np.concatenate([dataset.close[WARMUP + first:], f[["model", "persistence"]].to_numpy().ravel()])
    pad = 0.05 * (shown.max() - shown.min()) or 1.0
    layout["xaxis"]["range"] = [dataset.dates[first], dataset.dates[-1]]
    layout["yaxis"]["range"] = [float(shown.min() - pad), float(shown.max() + pad)]
    return _train_figure(data, layout, later("Held-out test days"), 440,
                         subtitle=later("actual close against next-day forecasts"))


# (Progress field, name, colour) of the two loss curves, in both loss charts.
LOSS_CURVES = (("train_loss", later("training loss"), "train"), ("val_loss", later("validation loss"), "val"))


def live_loss_option(history: list[Progress]) -> dict:
    """The loss curves while a run trains, as an ECharts option (``st.echarts_chart``).

    Not plotly, while it trains: Streamlit keys a plotly chart by its spec, so every redraw
    would mount a new chart, blank until drawn. An unkeyed ECharts chart keeps its instance
    and takes the new data in place. The same words as ``loss_figure`` in the same places:
    title top left, legend at the bottom, the x axis already spanning every epoch the run
    may take.
    """
    epochs = history[-1].max_epochs if history else 1
    font = {"fontFamily": theme.FONT_FAMILY, "color": theme.TEXT}
    return {
        "animation": False,
        "title": {"text": tr("Loss per epoch"), "left": 0, "top": MODE_BAR_PX - 6,
                  "textStyle": {**font, "fontSize": theme.TITLE_SIZE, "fontWeight": "bold"}},
        "legend": {"bottom": 0, "left": 0, "textStyle": {**font, "fontSize": theme.FONT_SIZE}},
        # containLabel makes room for the tick labels, not for the axis's name: its 30 px
        "grid": {"left": 30, "right": 16, "top": MODE_BAR_PX + TITLE_PX + 8, "bottom": 40,
                 "containLabel": True},
        "xAxis": {"type": "value", "min": 0, "max": epochs + 1, "name": tr("epoch"), "nameLocation": "middle",
                  "nameGap": 26, "nameTextStyle": font},
        "yAxis": {"type": "value", "scale": True, "name": tr("MSE (standardised target)"),
                  "nameLocation": "middle", "nameGap": 42, "nameTextStyle": font},
        "series": [{"type": "line", "name": str(name), "symbolSize": 4, "color": SERIES[colour],
                    "lineStyle": {"width": 2},
                    "data": [[p.epoch, round(getattr(p, key), 5)] for p in history]}
                   for key, name, colour in LOSS_CURVES],
    }


def loss_figure(history: tuple[Progress, ...] | list[Progress], height: int = 340) -> SharedFigure:
    """Training and validation loss per epoch (MSE on the standardised target), best epoch marked.

    The x axis spans every epoch the run may take, so while it trains the
    curves grow to the right instead of the axis rescaling under them.
    Redrawn at every progress report while a run trains, so written in canonical form too.
    """
    epochs = [p.epoch for p in history]
    data = [{"type": "scatter", "x": epochs, "y": [getattr(p, key) for p in history],
             "mode": "lines+markers", "name": name, "line": {"color": SERIES[colour], "width": 2},
             "marker": {"size": 4}}
            for key, name, colour in LOSS_CURVES]
    xaxis = {"title": {"text": later("epoch")}, "rangemode": "tozero"}
    if history:
        xaxis["range"] = [0, history[-1].max_epochs + 1]
    layout = {"xaxis": xaxis, "yaxis": {"title": {"text": later("MSE (standardised target)")}}}
    best = history[-1].best_epoch if history else 0
    if best:  # named in the legend: a label above the line sat on the title at an early best epoch
        layout["shapes"] = [{"type": "line", "xref": "x", "yref": "y domain", "x0": best, "x1": best,
                             "y0": 0, "y1": 1, "line": {"color": theme.MUTED, "dash": "dot"},
                             "name": later("best validation: epoch {epoch}", epoch=best), "showlegend": True}]
    return _train_figure(data, layout, later("Loss per epoch"), height)
