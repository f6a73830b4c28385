"""A bare Streamlit page for bench_core.py: draws one DOT file when asked.

Not part of the app. ``?dot=NAME`` names a file in $STOCKDEMO_PROBE_DIR; the
graph is drawn only after the "draw" button, so the benchmark can time the
click -> drawn SVG span once a warm-up graph has loaded Graphviz's WASM.
"""

import os
from pathlib import Path

import streamlit as st

name = Path(st.query_params.get("dot", "none")).name
st.graphviz_chart('digraph { warm -> up }')  # loads Graphviz's WASM before the timed draw
if st.button("draw", key="draw"):
    st.graphviz_chart((Path(os.environ["STOCKDEMO_PROBE_DIR"]) / name).read_text(), width="stretch")
