"""Small composite elements a page places with one call: a table, an aside, a chart after the graph."""

from __future__ import annotations

import time

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from stockdemo.i18n import tr
from stockdemo.ui import compat

# Sent together, the graph and a plotly chart redraw in one browser frame and the graph
# waits for plotly: a short pause lets the graph draw first. Only on an idle server (a
# quick rerun, no other run in progress): on a busy one it only adds to every wait.
GRAPH_FIRST_PAUSE_S = 0.1
PAUSE_ONLY_BELOW_S = 0.25


def table(data: list[dict] | pd.DataFrame | pa.Table, words: bool = False, **kwargs) -> None:
    """``st.dataframe`` without its index, given an Arrow table (rows and frames converted here).

    Given rows or a DataFrame, Streamlit converts them through pandas on every rerun;
    a table shown on every rerun from a cache is best converted once, in the cache.
    ``words``: its column names and its text are msgids (a table every session shares),
    said here in the reader's language.
    """
    if isinstance(data, pd.DataFrame):
        data = pa.Table.from_pandas(data, preserve_index=False)
    elif not isinstance(data, pa.Table):
        data = pa.Table.from_pylist(data)
    st.dataframe(said(data) if words else data, hide_index=True, width="stretch", **kwargs)


def said(data: pa.Table) -> pa.Table:
    """``data`` with its column names and text cells in the reader's language (text that is
    no msgid, such as a date or code, stays as it is)."""
    columns = [pa.array([tr(v) if isinstance(v, str) else v for v in column.to_pylist()])
               if pa.types.is_string(column.type) else column for column in data.columns]
    return pa.Table.from_arrays(columns, names=[tr(name) for name in data.column_names])


def aside(text: str, code: str, note: str = "", where=st) -> None:
    """An explanation beside a live result: text, the Python it is about, a small note.

    One Markdown element, not three (markdown, code, caption): a page in a fragment
    sends every element again on each slider move, and these do not change with it.
    """
    parts = [text, f"```python\n{code.strip()}\n```"]
    if note:
        parts.append(f":gray[:small[{note}]]")
    where.markdown("\n\n".join(parts))


def chart_after_graph(fig: go.Figure, alt: str, rerun_started: float) -> None:
    """A full-width plotly chart, sent a moment after the graph above it.

    ``rerun_started``: ``time.perf_counter()`` when this rerun began.
    """
    if time.perf_counter() - rerun_started < PAUSE_ONLY_BELOW_S and compat.runs_in_progress() <= 1:
        time.sleep(GRAPH_FIRST_PAUSE_S)
    st.plotly_chart(fig, width="stretch", alt=alt)
