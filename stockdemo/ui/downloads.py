"""A run's downloads: its graph as DOT and JSON, its predictions as CSV, each built on the click."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from stockdemo import figures
from stockdemo.i18n import tr
from stockdemo.live.run import RunResult


def run_downloads(result: RunResult, dot: Callable[[], str]) -> None:
    """The run's graph as DOT and JSON, and its predictions as CSV.

    ``dot`` builds the DOT text when the button is pressed, not on every slider move.
    A press runs nothing else (``on_click="ignore"``): a rerun would cost a whole run,
    and every run that ends brings the made file closer to being dropped before the
    browser fetches it (Streamlit drops it after two).
    """
    config = result.config
    downloads = st.container(horizontal=True)
    downloads.download_button(tr("Download DOT"), dot,
                              file_name=f"graph_{config.cell}_T{config.seq_len}.dot",
                              mime="text/vnd.graphviz", icon=":material/download:", on_click="ignore")
    # Built only when clicked: the JSON of an 11,000-node graph takes longer than the run.
    downloads.download_button(tr("Download graph JSON"), lambda: figures.graph_json(result.graph),
                              file_name=f"graph_{config.cell}_T{config.seq_len}.json",
                              mime="application/json", icon=":material/download:", on_click="ignore")
    downloads.download_button(tr("Download predictions CSV"), lambda: figures.predictions_csv(result),
                              file_name="predictions.csv", mime="text/csv",
                              icon=":material/download:", on_click="ignore")
