"""Playground: move a slider, the model is rebuilt and run, and its autograd graph redrawn."""

import time

import pandas as pd
import streamlit as st

from stockdemo import figures, ui
from stockdemo.config import CELL_LABELS
from stockdemo.graph import describe_diff, graph_diff
from stockdemo.live import reproduce_code
from stockdemo.ui.graph_view import cached_picture, cached_trace, graph_view, replay_toggle

ui.setup_page(
    "Playground", ":material/tune:",
    "Drag **Sequence length T** one step to the right and watch the graph below gain one "
    "block per layer: PyTorch recorded it while the loop ran.",
    __file__,
)

present = ui.presenting()
with st.expander("Presets for class", expanded=not present):
    ui.presets_bar()


# A fragment: moving a control reruns only this part, not the page frame around it,
# so thirty students moving sliders at once queue behind less work.
@st.fragment
def live_run() -> None:
    rerun_started = time.perf_counter()
    config, view = ui.run_controls()
    started = time.perf_counter()
    result = ui.cached_run(config)
    picture = cached_picture(config, view)
    elapsed_ms = (time.perf_counter() - started) * 1e3
    graph = result.graph
    stats = graph.stats

    # What changed since this session's previous run (kept per user, not shared).
    previous = st.session_state.get("playground_previous")
    if previous is None:
        change = "First run of this session: every node is new."
    elif previous["config"] != config:
        diff = graph_diff(previous["graph"], graph)
        change = describe_diff(diff, previous["config"].__dict__, config.__dict__)
        st.session_state["playground_change"] = change
        st.session_state["playground_new"] = [n.id for n in diff.added_nodes]
    else:
        change = st.session_state.get("playground_change", "Same settings as before.")
    st.session_state["playground_previous"] = {"config": config, "graph": graph}

    # One row container rather than st.columns: fewer blocks to send on every move.
    row = st.container(horizontal=True, gap="medium")
    row.metric("Output shape", str(tuple(result.predictions.shape)))
    row.metric("Parameters", f"{result.parameter_count:,}")
    row.metric("Graph nodes", f"{stats['nodes']:,}",
               delta=None if previous is None else stats["nodes"] - previous["graph"].stats["nodes"])
    row.metric("Graph edges", f"{stats['edges']:,}")
    row.metric("Run + capture", f"{result.timings_ms['forward'] + result.timings_ms['capture']:.0f} ms",
               help="Forward pass and graph capture, measured on the server when this config first ran.")
    row.metric("This page update", f"{elapsed_ms:.0f} ms", help="Including cache look-ups.")

    st.info(f"**Since the previous run:** {change}", icon=":material/difference:")

    if graph.meta.get("fused"):
        st.warning(
            "**Why is this graph so small?** On CPU, `nn.LSTM` runs all time steps of a layer "
            "inside one fused oneDNN (MKLDNN) kernel, so autograd records a single "
            "`MkldnnRnnLayerBackward0` node per layer. The graph does not grow with T. "
            "The loop still runs, just in C++ where autograd cannot see the steps. Pick "
            f"**{CELL_LABELS['lstm_loop']}** to see every step recorded.",
            icon=":material/bolt:",
        )

    st.subheader("The autograd graph of this run", anchor=False)
    if not present:
        st.caption(picture.caption + ". Arrows follow the forward pass; `backward()` walks them in "
                   "reverse. Orange arrows carry the hidden state from one step to the next.")
    if picture.view == "rolled" and view == "auto" and not present:
        st.caption(f"The full graph has {stats['nodes']:,} nodes, too many to read at once, so it is "
                   "drawn rolled. Choose *unrolled* under *More settings* to draw every node.")
    trace = cached_trace(config) if replay_toggle() else None
    graph_view(picture, trace, new_ids=st.session_state.get("playground_new", ()) if previous else (),
               settings=config.to_params(), key="graph")
    st.markdown("**Link to this run** (same seed, same picture for every student):")
    st.code(ui.share_link("pages/playground.py",
                          {**config.to_params(), **({"view": view} if view != "auto" else {})}),
            language=None)
    downloads = st.container(horizontal=True)
    downloads.download_button("Download DOT", lambda: ui.cached_render(config, view).dot,
                              file_name=f"graph_{config.cell}_T{config.seq_len}.dot",
                              mime="text/vnd.graphviz", icon=":material/download:")
    # Built only when clicked: the JSON of an 11,000-node graph takes longer than the run.
    downloads.download_button("Download graph JSON", lambda: figures.graph_json(graph),
                              file_name=f"graph_{config.cell}_T{config.seq_len}.json",
                              mime="application/json", icon=":material/download:")
    downloads.download_button("Download predictions CSV", lambda: figures.predictions_csv(result),
                              file_name="predictions.csv", mime="text/csv",
                              icon=":material/download:")

    # Lazy tabs: only the open one runs, so a slider move builds one figure, not three.
    tab_pred, tab_ops, tab_size, tab_code = st.tabs(
        ["Predictions", "Ops by type", "Graph size against T", "Code for this run"],
        key="panel", bind="query-params")
    with tab_pred:
        if tab_pred.open:
            ui.chart_after_graph(
                ui.cached_figure("predictions", config),
                alt=f"Line chart: the first feature of {min(8, config.batch_size)} input windows "
                    f"over {config.seq_len} steps, each window's prediction a star.",
                rerun_started=rerun_started)
            st.caption("The model is untrained, so its predictions are as random as its weights; "
                       "the *Train and predict* page fits it to real prices.")
    with tab_ops:
        if tab_ops.open:
            ops = pd.DataFrame(list(stats["ops_by_type"].items()), columns=["op", "count"])
            ui.chart_after_graph(
                ui.cached_figure("ops", config),
                alt="Bar chart of autograd nodes by op: "
                    + ", ".join(f"{r.op} {r.count}" for r in ops.itertuples()),
                rerun_started=rerun_started)
            st.dataframe(ops, hide_index=True, width="stretch")
    with tab_size:
        if tab_size.open:
            sweep = ui.cached_size_sweep(config.cell, config.num_layers)
            ui.chart_after_graph(
                ui.cached_figure("size", config),
                alt="Line chart of graph nodes against sequence length: "
                    + ", ".join(f"T {r['seq_len']}: {r['nodes']}" for r in sweep),
                rerun_started=rerun_started)
            if graph.meta.get("fused"):
                st.caption("Flat: the fused LSTM kernel records one node per layer whatever T is.")
            else:
                rise = sweep[-1]["nodes"] - sweep[1]["nodes"]
                growth = rise / (sweep[-1]["seq_len"] - sweep[1]["seq_len"])
                st.caption(f"A straight line: each extra time step adds {growth:.0f} nodes "
                           f"({growth / config.num_layers:.0f} per layer). Measured live at batch 1, "
                           "hidden 4: the graph's size does not depend on those.")
    with tab_code:
        if tab_code.open:
            st.markdown("Paste this into a fresh Python session: it prints the same predictions.")
            st.code(reproduce_code(config), language="python")


live_run()
