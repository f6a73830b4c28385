"""Debugging: hidden states, gradients through time, prints and saved tensors of a live run."""

import streamlit as st

from stockdemo import ui
from stockdemo.config import PRINT_STEP
from stockdemo.i18n import N_, tr, trn
from stockdemo.i18n.numbers import significant
from stockdemo.live import inspection

ui.setup_page(
    N_("Debugging"), ":material/bug_report:",
    N_("The run is just Python, so you can look inside it. Drag **Sequence length T** to 50 and "
       "watch the gradient line fall; then pick **relu** and a **weight scale** of 300 % and watch it "
       "shoot up instead."),
    __file__,
)


@ui.fragment
def live() -> None:
    config, scale_pct, nonlinearity = ui.debug_controls()
    run = ui.cached_inspection(config, scale_pct / 100, nonlinearity)
    T = config.seq_len
    if config.base_cell != "rnn" and nonlinearity == "relu":
        st.caption(tr("{cell}: GRU and LSTM cells have fixed gates, so *relu* applies to RNN cells only.",
                      cell=config.cell))
    if not config.is_loop:
        st.caption(tr("`{module}` runs every step inside one C++ call and returns only the last layer's "
                      "outputs, so below its steps are re-run one by one in Python with the module's own "
                      "weights (the numbers match its outputs).", module=f"nn.{config.cell.upper()}"))

    # The gradients first: the page's first sentence says to watch their line, so it sits
    # right under the controls that move it.
    st.subheader(tr("1 · How much the prediction still feels each step"), anchor=False)
    first, last, ratio = run.grad_norms[-1, 0], run.grad_norms[-1, -1], run.vanishing_ratio
    ui.metric_row([
        ui.Metric(tr("Sequence length T"), T),
        ui.Metric(tr("‖∂L/∂h₀‖ (first step)"), significant(first)),
        ui.Metric(tr("‖∂L/∂h_{step}‖ (last step)", step=str(T - 1)), significant(last)),
        ui.Metric(tr("first / last"), significant(ratio), help=tr(
            "Below 1 the gradient fades going back in time (vanishing); above 1 it grows (exploding). "
            "Last layer.")),
    ])
    left, right = st.columns([5, 4], gap="large")
    with left:
        st.plotly_chart(ui.cached_debug_figure("gradient", config, scale_pct / 100, nonlinearity),
                        width="stretch", key="gradient_norms")
        zeros = int((run.grad_norms == 0).sum())
        if zeros:
            st.caption(trn("{n} point underflowed to exactly 0 (below float32's smallest number) and cannot "
                           "be drawn on a log scale.", "{n} points underflowed to exactly 0 (below "
                           "float32's smallest number) and cannot be drawn on a log scale.", zeros))
        if T > 1:
            st.markdown(tr("{trend} (Recurrent weights at {scale} %, `{nonlinearity}`.)",
                           trend=inspection.describe_trend(inspection.gradient_trend(ratio)),
                           scale=scale_pct, nonlinearity=nonlinearity))
    ui.aside(tr("`retain_grad()` keeps the gradient of a tensor that is not a leaf, so after "
                "`backward()` every step's hidden state has its own `.grad`:"),
             inspection.RETAIN_GRAD_CODE,
             tr("The norm runs over the whole batch and every unit. The loss only reads the last "
                "step, so earlier steps get gradient only through the chain of hidden-to-hidden "
                "weights, once per step."), where=right)

    st.subheader(tr("2 · The hidden state at every step"), anchor=False)
    left, right = st.columns([5, 4], gap="large")
    left.plotly_chart(ui.cached_debug_figure("hidden", config, scale_pct / 100, nonlinearity),
                      width="stretch", key="hidden_heatmap")
    ui.aside(tr("A **forward hook** on each cell sees every hidden state the moment it is made:"),
             inspection.HOOK_CODE.format(T=T),
             tr("Each column is one time step, each row one unit of the hidden state. "
                "Red is positive, blue negative."), where=right)

    st.subheader(tr("3 · print() from inside forward"), anchor=False)
    left, right = st.columns([5, 4], gap="large")
    with left:
        step = ui.capped_knob_widget(PRINT_STEP, T - 1)
        st.code(ui.cached_prints(config, scale_pct / 100, nonlinearity, int(step)), language="text",
                wrap_lines=True)
    ui.aside(tr("A hook is ordinary Python, so it can `print`; `redirect_stdout` catches the text:"),
             inspection.PRINT_CODE.format(step=step), where=right)

    st.subheader(tr("4 · What autograd saved for one node"), anchor=False)
    graph = run.graph
    ui.node_from_url(graph, inspection.default_node(graph, config))
    left, right = st.columns([5, 4], gap="large")
    with left:
        node_id = st.selectbox(trn("Node of this run's graph ({n} node)",
                                   "Node of this run's graph ({n} nodes)", len(graph.nodes)),
                               [n.id for n in graph.nodes], key="node", bind="query-params",
                               format_func=lambda i: inspection.node_label(graph, i))
        details = inspection.node_details(run, node_id)
        none = tr("none")
        st.markdown(tr("**{node}**: `{op}`  \ninputs: {inputs}  \noutputs: {outputs}", node=details.id,
                       op=details.op or details.kind,
                       inputs=", ".join(f"`{i}`" for i in details.inputs) or none,
                       outputs=", ".join(f"`{o}`" for o in details.outputs) or none))
        if details.saved:
            ui.table(inspection.saved_rows(details), key="saved_tensors")
        else:
            st.caption(tr("This op saved nothing for backward: its gradient needs no forward values."))
    ui.aside(tr("Every node of the graph is a live `grad_fn`. What it kept for `backward()` "
                "hangs off it as `_saved_*` attributes:"), inspection.SAVED_CODE,
             tr("Saved tensors are freed by `backward()` unless it is called with "
                "`retain_graph=True`; this graph has not been backward'd, so all are readable."),
             where=right)


live()
