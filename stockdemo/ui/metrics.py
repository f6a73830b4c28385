"""A row of figures, as ``st.metric`` draws them but sent as one element; and a run's figures."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import NamedTuple

import streamlit as st

from stockdemo.graph import NodeCounts, count_text
from stockdemo.i18n import number as written
from stockdemo.i18n import tr
from stockdemo.live.run import RunResult


class Metric(NamedTuple):
    """One figure of a metric row: a label, its value, a change since last time, a tooltip."""

    label: str
    value: object
    delta: int | float | None = None
    help: str | None = None


def metric_row(metrics: Iterable[Metric], where=st) -> None:
    """Figures side by side, as ``st.metric`` draws them, sent as one element.

    Each ``st.metric`` is an element of its own, and each element costs the server
    its own message on every rerun. A description list, styled in
    ``frame.FRAME_CSS``: screen readers read each label with its value.
    """
    items = []
    for m in metrics:
        tip = ""
        if m.help:
            text = html.escape(m.help, quote=True)
            tip = (f' <span class="sd-help" tabindex="0" role="img" aria-label="{text}" '
                   f'title="{text}">?</span>')
        change = ""
        if m.delta is not None:
            sign = "up" if m.delta > 0 else "down" if m.delta < 0 else "flat"
            arrow = {"up": "↑ +", "down": "↓ −", "flat": "± "}[sign]
            change = (f'<dd class="sd-delta sd-{sign}" data-testid="sdMetricDelta">'
                      f'{arrow}{written(abs(m.delta))}</dd>')
        items.append(f'<div class="sd-metric" data-testid="sdMetric">'
                     f'<dt data-testid="sdMetricLabel">{html.escape(m.label)}{tip}</dt>'
                     f'<dd data-testid="sdMetricValue">{html.escape(str(m.value))}</dd>{change}</div>')
    where.markdown(f'<dl class="sd-metrics">{"".join(items)}</dl>', unsafe_allow_html=True)


def nodes_metric(counts: NodeCounts | None, delta: int | None = None) -> Metric:
    """"Graph nodes", the one count every page shows for a run (``NodeCounts.nodes``), and what
    it counts in words; "–" where the run made no graph."""
    if counts is None:
        return Metric(tr("Graph nodes"), "–")
    return Metric(tr("Graph nodes"), written(counts.nodes), delta=delta,
                  help=tr("{summary}.", summary=counts.summary()))


def run_figures(result: RunResult, delta: int | None, elapsed_ms: float) -> list[Metric]:
    """Output shape, parameters, graph size and times of one run: the stage draws them over its graph."""
    counts = result.graph.counts
    return [
        Metric(tr("Output shape"), str(tuple(result.predictions.shape))),
        Metric(tr("Parameters"), written(result.parameter_count),
               help=tr("Numbers the model learns, held in the graph's {parameters}.",
                       parameters=count_text(counts.parameters, "parameter"))),
        nodes_metric(counts, delta),
        Metric(tr("Graph edges"), written(counts.edges),
               help=tr("Arrows between nodes: which node's output feeds which.")),
        Metric(tr("Run + capture"), tr("{ms} ms", ms=round(result.timings_ms["forward"]
                                                           + result.timings_ms["capture"])),
               help=tr("Forward pass and graph capture, measured on the server when this config first ran.")),
        Metric(tr("This page update"), tr("{ms} ms", ms=round(elapsed_ms)),
               help=tr("Including cache look-ups.")),
    ]
