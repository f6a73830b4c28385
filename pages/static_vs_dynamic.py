"""Static vs dynamic: the same model under eager autograd, torch.compile and torch.export, live."""

import time

import streamlit as st

from stockdemo import static_graphs as static
from stockdemo import ui
from stockdemo.i18n import N_, tr
from stockdemo.i18n import number as written
from stockdemo.ui.graph_view import graph_view

ui.setup_page(
    N_("Static vs dynamic"), ":material/compare_arrows:",
    N_("Press **Capture static graphs**, then move **Sequence length T** a few times and watch "
       "the recompile count climb: `torch.compile` captures one fixed graph per shape, while eager "
       "PyTorch simply records a new graph on every run."),
    __file__,
)


@ui.fragment
def live() -> None:
    started = time.perf_counter()
    config, captures_on, fresh = ui.static_controls()
    T = config.seq_len
    if captures_on:  # first: its progress bar and the count sit right under the Capture button
        capture, exports = ui.static_captures(config, fresh)
        ui.recompile_count(capture)
    result, picture = ui.cached_run(config), ui.cached_picture(config, "auto")

    st.subheader(tr("One model, two kinds of graph"), anchor=False)
    # The unrolled eager graph runs across (time), the FX graph runs down: give width to the first.
    left, right = st.columns([3, 2], gap="large")
    left.markdown(tr("**Eager autograd: recorded while this run's Python ran** (T = {T})", T=T))
    with left:
        graph_view(picture, settings=config.to_params(), key="eager_graph")
    left.caption(tr("{caption}. A new graph like this is recorded on every call, whatever the shapes or the "
                    "branches taken.", caption=picture.caption))
    right.markdown(tr("**torch.compile: the static FX graph dynamo captured for T = {T}**", T=T))
    if not captures_on:
        right.info(tr("Press **Capture static graphs** above to trace this model with `torch.compile` "
                      "(a recording-only backend: no code is generated) and `torch.export`."),
                   icon=":material/touch_app:")
    elif capture.steps[-1].eager:
        right.warning(tr("No graph for T = {T}: dynamo reached its recompile limit ({limit} graphs) and ran "
                         "`forward` eagerly.", T=T, limit=capture.limit), icon=":material/block:")
    else:
        with right:
            ui.fx_graph(capture)
    if captures_on:
        st.subheader(tr("Recompiles as T changes"), anchor=False)
        ui.recompiles(capture)

    st.subheader(tr("torch.export: the whole graph, ahead of time"), anchor=False)
    if not captures_on:
        st.info(tr("Press **Capture static graphs** to run `torch.export` live."),
                icon=":material/touch_app:")
    else:
        fixed, dynamic = exports["static"], exports["dynamic"]
        e1, e2 = st.columns(2, gap="large")
        with e1:
            st.markdown(tr("**Static shapes:** `torch.export.export(model, (x,))`, x of shape `{shape}`",
                           shape=tuple(result.inputs.shape)))
            ui.outcome_box(fixed, tr("Every op has a fixed shape, known before any data arrives:"),
                           tr("Even fixed shapes were refused: the message says which part export "
                              "could not trace."), ops=True)
        with e2:
            st.markdown(tr("**Dynamic T:** the same call with `{code}`",
                           code="dynamic_shapes={'x': {1: Dim('T', min=2, max=200)}}"))
            ui.outcome_box(dynamic, tr("One exported program serves every T from 2 to 200."),
                           static.why_dynamic_export_failed(dynamic, T), ops=True)

    st.subheader(tr("When the graph depends on the data"), anchor=False)
    runs = ui.cached_early_stop_runs(config)
    st.markdown(tr(
        "A variant of the model stops reading the sequence once the hidden state grows large: an "
        "`if` on a tensor's **value** (threshold {threshold}, set from this input). Eager "
        "PyTorch just runs the Python, so two inputs record two differently sized graphs:",
        threshold=written(runs[0][0].threshold)))
    st.code(static.steps_source(static.EarlyStopRNN), language="python")
    for i, (col, (run, picture)) in enumerate(zip(st.columns(2, gap="large"), runs, strict=True)):
        col.markdown(tr("**{input}** (x × {scale}): ran **{steps} of {T}** steps, **{nodes} nodes** recorded",
                        input=run.label, scale=written(run.scale), steps=run.steps, T=run.seq_len,
                        nodes=run.graph.stats["nodes"]))
        with col:
            graph_view(picture, key=f"early_stop_graph_{i}", url_key=None, height=320)
    if runs[0][0].steps == runs[1][0].steps:
        st.caption(tr("At this length both inputs ran the same number of steps; try T of 3 or more to "
                      "see them part ways."))
    if captures_on:
        early_stop, cond = exports["early_stop"], exports["cond"]
        d1, d2 = st.columns(2, gap="large")
        with d1:
            st.markdown(tr("**torch.export of the early-stop model**"))
            ui.outcome_box(early_stop, tr("Export traced a graph with the branch decided for this input."),
                           tr("While tracing, the norm is a symbol with no value, so Python's `if` cannot "
                              "pick a branch: export needs the decision written into the graph."))
        with d2:
            st.markdown(tr("**The same stop rewritten with `torch.cond`** (exported at T = {T}: each step "
                           "adds a cond and two traced branches)", T=min(T, static.COND_MAX_T)))
            ui.outcome_box(cond, tr("Both branches now sit in the graph and each step picks one at run "
                                    "time; the loop always runs all T steps (the skipped ones copy `h`)."),
                           tr("Even the `torch.cond` form was refused."))
            st.code(static.steps_source(static.CondStopRNN), language="python", wrap_lines=True)
    st.caption(tr("This page update: {ms} ms on the server.",
                  ms=round((time.perf_counter() - started) * 1e3)))


live()
st.subheader(tr("When static graphs win"), anchor=False)
st.markdown(tr(static.WHEN_STATIC_WINS))
