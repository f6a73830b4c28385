"""Composite elements a page places with one call: pieces made of several Streamlit elements."""

from __future__ import annotations

import time

import plotly.graph_objects as go
import streamlit as st

# Sent together, the graph and a plotly chart redraw in one browser frame and
# the graph waits ~0.2 s for plotly. A pause before the chart lets the browser
# draw the graph first (bench/bench_browser.py, default config: slider to
# graph 0.49-0.53 s -> 0.36-0.39 s; the chart follows as before). Only when
# the server answered quickly: a slow rerun means a busy server, where the
# pause would only add to every learner's wait (bench/load.py).
GRAPH_FIRST_PAUSE_S = 0.1
PAUSE_ONLY_BELOW_S = 0.25


def chart_after_graph(fig: go.Figure, alt: str, rerun_started: float) -> None:
    """A full-width plotly chart, sent a moment after the graph above it.

    ``rerun_started``: ``time.perf_counter()`` when this rerun began.
    """
    if time.perf_counter() - rerun_started < PAUSE_ONLY_BELOW_S:
        time.sleep(GRAPH_FIRST_PAUSE_S)
    st.plotly_chart(fig, width="stretch", alt=alt)
