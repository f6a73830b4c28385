"""Playground: drag T on the stage; the model is rebuilt and run, and its autograd graph redrawn."""

import time

import streamlit as st

from stockdemo import figures, ui
from stockdemo.config import CELL, VIEW
from stockdemo.i18n import N_, tr
from stockdemo.live.reproduce import reproduce_code
from stockdemo.ui.graph_view import graph_view

ui.setup_page(
    N_("Playground"), ":material/tune:",
    N_("Drag **Sequence length T** one step to the right and watch the graph gain one block per "
       "layer: PyTorch recorded it while the loop ran."),
    __file__, stage=True,
)
present = ui.presenting()


# The stage is a fragment: while the learner drags, only it reruns, and it draws one
# element, the graph view (its controls and the run's figures inside). The panels under it
# are a fragment of their own, rerun once the learner stops (ui.settle_listener): the
# table of the graph, the URL, the charts.
@ui.fragment(key=ui.PLAYGROUND_LIVE)
def live_stage() -> None:
    started = time.perf_counter()
    config, view = ui.run_controls()
    trace = ui.replay_control(lambda: ui.cached_trace(config), in_view=True)
    locked, compare = ui.controls_locked(), ui.comparison(config, view)
    # Where the run draws nothing but the stage, the browser's next moves need no run at all.
    direct = ui.direct_moves(config, view, present=present, plain=not (trace or compare or locked))
    picture, new_ids, stage = ui.live_stage(config, view, started, replay=trace is not None, locked=locked,
                                            present=present, direct=direct)
    graph_view(picture, trace, new_ids=new_ids, settings=config.to_params(), key="graph", stage=stage,
               compare=compare)
    ui.drawn_on_stage(config, view)  # last: what "Pin as A" pins and the panels below show


@ui.fragment(key="playground_panels")
def panels() -> None:
    settled = ui.settle_listener()
    rerun_started = time.perf_counter()
    config, view = ui.stage_config()  # what the stage last drew
    ui.stage_to_url()
    result, picture = ui.cached_run(config), ui.cached_picture(config, view)
    ui.stage_table(config, view)
    if result.graph.meta.get("fused"):
        st.warning(
            tr("**Why is this graph so small?** On CPU, `nn.LSTM` runs all time steps of a layer "
               "inside one fused oneDNN (MKLDNN) kernel, so autograd records a single "
               "`MkldnnRnnLayerBackward0` node per layer. The graph does not grow with T. "
               "The loop still runs, just in C++ where autograd cannot see the steps. Pick "
               "**{cell}** to see every step recorded.", cell=CELL.show("lstm_loop")),
            icon=":material/bolt:",
        )
    if not present:
        st.caption(tr("{caption}. Arrows follow the forward pass; `backward()` walks them in reverse. "
                      "Orange arrows carry the hidden state from one step to the next.",
                      caption=picture.caption))
    if picture.view == "rolled" and view == "auto" and not present:
        st.caption(tr("The full graph has {nodes} nodes, too many to read at once, so it is drawn rolled. "
                      "Choose *{unrolled}* under *{more}* to draw every node.",
                      nodes=result.graph.counts.nodes, unrolled=VIEW.show("unrolled"),
                      more=tr("More settings")))
    # Only the open panel runs: a change builds one figure, not three, and sends the link,
    # the downloads and the code only while their panel is open.
    panel = ui.panel_picker()
    if panel == "predictions":
        ui.chart_after_graph(ui.cached_figure("predictions", config),
                             alt=figures.predictions_alt(config), rerun_started=rerun_started)
        st.caption(tr("The model is untrained, so its predictions are as random as its weights; "
                      "the *{train}* page fits it to real prices.", train=tr("Train and predict")))
    elif panel == "ops":
        ops = figures.ops_table(result.graph)
        ui.chart_after_graph(ui.cached_figure("ops", config), alt=figures.ops_alt(ops),
                             rerun_started=rerun_started)
        ui.table(ops.rename(columns=tr))  # op names are code: only the columns are words
    elif panel == "size":
        sweep = ui.cached_size_sweep(config.cell, config.num_layers)
        ui.chart_after_graph(ui.cached_figure("size", config), alt=figures.size_alt(sweep),
                             rerun_started=rerun_started)
        st.caption(figures.size_caption(sweep, config, bool(result.graph.meta.get("fused"))))
    else:
        st.markdown(tr("**Link to this run** (same seed, same picture for every student):"))
        st.code(ui.stage_link(config, view), language=None)
        ui.run_downloads(result, lambda: ui.cached_render(config, view).dot)
        st.markdown(tr("**The code of this run.** Paste it into a fresh Python session: it prints "
                       "the same predictions."))
        st.code(reproduce_code(config), language="python")
    ui.stage_settled(settled)  # last: it may ask for the stage again, after this run


live_stage()
panels()
ui.more_settings()
# Drawn only while open: a closed expander's buttons are still elements the browser's page
# redraws at every step of the stage, and the server sends at every whole-page run.
with st.expander(tr("Presets for class"), key="presets", on_change="rerun") as presets:
    if presets.open:
        ui.presets_bar()
with st.expander(tr("Compare two runs"), key="compare_presets", on_change="rerun") as compare:
    if compare.open:
        ui.compare_bar()
