"""Debugging: hidden states, gradients through time, prints and saved tensors of a live run."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from stockdemo import inspection, ui
from stockdemo.config import (
    BATCH_SIZE,
    CELL,
    DEBUG_KNOBS,
    HIDDEN_SIZE,
    INPUT_SIZE,
    NONLINEARITY,
    NUM_LAYERS,
    PRINT_STEP,
    RUN_KNOBS,
    SEED,
    SEQ_LEN,
    WEIGHT_SCALE,
    RunConfig,
)
from stockdemo.figures import PALETTE

ui.setup_page(
    "Debugging", ":material/bug_report:",
    "The run is just Python, so you can look inside it. Drag **Sequence length T** to 50 and "
    "watch the gradient line fall; then pick **relu** and a **weight scale** of 300 % and watch it "
    "shoot up instead.",
    __file__,
)

ui.url_messages("debugging", (*RUN_KNOBS, *DEBUG_KNOBS))
model = ui.knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)
debug = ui.knob_row(WEIGHT_SCALE, NONLINEARITY)
with st.expander("More settings: batch, features, seed"):
    more = ui.knob_row(BATCH_SIZE, INPUT_SIZE, SEED)
config = RunConfig(**model, **more)
scale_pct, nonlinearity = debug[WEIGHT_SCALE.name], debug[NONLINEARITY.name]
scale = int(scale_pct) / 100
run = ui.cached_inspection(config, scale, nonlinearity)
T, L = config.seq_len, config.num_layers

if config.base_cell != "rnn" and nonlinearity == "relu":
    st.caption(f"{config.cell}: GRU and LSTM cells have fixed gates, so *relu* applies to RNN cells only.")
if config.cell in ("rnn", "gru", "lstm"):
    st.caption(f"`nn.{config.cell.upper()}` runs every step inside one C++ call and returns only the last "
               "layer's outputs, so below its steps are re-run one by one in Python with the "
               "module's own weights (the numbers match its outputs).")



def factor(value: float) -> str:
    """2.6e6 -> '2.6 × 10⁶': readable from the back of the room."""
    if value < 1000 or value == float("inf"):
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")

# --- 1. Hidden state --------------------------------------------------------
st.subheader("1 · The hidden state at every step", anchor=False)
left, right = st.columns([5, 4], gap="large")
with left:
    heat = make_subplots(rows=L, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                         subplot_titles=[f"layer {layer}" for layer in range(L)])
    limit = max(float(abs(h).max()) for h in run.hidden) or 1.0
    for layer, h in enumerate(run.hidden):  # h: (T, hidden)
        heat.add_trace(go.Heatmap(z=h.T, x=list(range(T)), y=list(range(h.shape[1])),
                                  colorscale="RdBu_r", zmin=-limit, zmax=limit, zmid=0,
                                  showscale=layer == 0, colorbar=dict(title="h"),
                                  hovertemplate="t=%{x}, unit %{y}: %{z:.3f}<extra></extra>"),
                       row=layer + 1, col=1)
        heat.update_yaxes(title="unit", row=layer + 1, col=1)
    heat.update_xaxes(title="time step t", row=L, col=1)
    heat.update_layout(title=f"Hidden state h_t of sequence 0 (T = {T}, hidden = {config.hidden_size})",
                       height=170 + 150 * L + min(config.hidden_size, 64) * 2 * L,
                       margin=dict(l=10, r=10, t=70, b=10), font=dict(size=14))
    st.plotly_chart(heat, width="stretch", key="hidden_heatmap")
with right:
    st.markdown("A **forward hook** on each cell sees every hidden state the moment it is made:")
    st.code(
        "states = []\n"
        "def keep(module, args, h):\n"
        "    states.append(h)  # (batch, hidden)\n"
        "\n"
        "hook = cell.register_forward_hook(keep)\n"
        "predictions = model(input_data)\n"
        "hook.remove()\n"
        f"len(states)  # {T}, one per step", language="python", wrap_lines=True)
    st.caption("Each column is one time step, each row one unit of the hidden state. "
               "Red is positive, blue negative.")

# --- 2. Gradients through time ----------------------------------------------
st.subheader("2 · How much the prediction still feels each step", anchor=False)
first, last = run.grad_norms[-1, 0], run.grad_norms[-1, -1]
ratio = run.vanishing_ratio
g = st.columns(4)
g[0].metric("Sequence length T", T)
g[1].metric("‖∂L/∂h₀‖ (first step)", f"{first:.3g}")
g[2].metric(f"‖∂L/∂h_{T - 1}‖ (last step)", f"{last:.3g}")
g[3].metric("first / last", f"{ratio:.3g}",
            help="Below 1 the gradient fades going back in time (vanishing); above 1 it grows "
                 "(exploding). Last layer.")
left, right = st.columns([5, 4], gap="large")
with left:
    grad = go.Figure()
    for layer in range(L):
        grad.add_trace(go.Scatter(x=list(range(T)), y=run.grad_norms[layer], mode="lines+markers",
                                  name=f"layer {layer}", line=dict(color=PALETTE[layer % len(PALETTE)],
                                                                   width=3)))
    grad.update_yaxes(type="log", title="‖∂L/∂h_t‖ (log scale)", exponentformat="power")
    grad.update_xaxes(title=f"time step t (T = {T})", range=[-0.5, T - 0.5])
    grad.update_layout(title=f"Gradient of L = {inspection.LOSS} at each step's hidden state",
                       height=400, margin=dict(l=10, r=10, t=60, b=10), font=dict(size=14),
                       legend=dict(orientation="h", y=-0.25))
    st.plotly_chart(grad, width="stretch", key="gradient_norms")
    zeros = int((run.grad_norms == 0).sum())
    if zeros:
        st.caption(f"{zeros} point{'s' if zeros != 1 else ''} underflowed to exactly 0 (below "
                   "float32's smallest number) and cannot be drawn on a log scale.")
    setting = f"(Recurrent weights at {scale_pct} %, `{nonlinearity}`.)"
    if T > 1 and ratio == 0:
        st.markdown("Going back from the last step to the first, the gradient **vanishes "
                    f"completely**: at step 0 it is exactly 0. {setting}")
    elif T > 1 and ratio < 1:
        st.markdown(f"Going back from the last step to the first, the gradient **shrinks by a "
                    f"factor of {factor(1 / ratio)}**: vanishing gradients. Step 0 barely moves "
                    f"the weights. {setting}")
    elif T > 1:
        st.markdown(f"Going back from the last step to the first, the gradient **grows by a "
                    f"factor of {factor(ratio)}**: exploding gradients. {setting}")
with right:
    st.markdown("`retain_grad()` keeps the gradient of a tensor that is not a leaf, so after "
                "`backward()` every step's hidden state has its own `.grad`:")
    st.code(
        "# in the hook, during forward:\n"
        "h.retain_grad()\n"
        "\n"
        f"loss = {inspection.LOSS}\n"
        "loss.backward()\n"
        "norms = [h.grad.norm()\n"
        "         for h in states]", language="python", wrap_lines=True)
    st.caption("The norm runs over the whole batch and every unit. The loss only reads the "
               "last step, so earlier steps get gradient only through the chain of "
               "hidden-to-hidden weights, once per step.")

# --- 3. Prints from inside forward -------------------------------------------
st.subheader("3 · print() from inside forward", anchor=False)
left, right = st.columns([5, 4], gap="large")
with left:
    step = ui.capped_knob_widget(PRINT_STEP, T - 1)
    text = ui.cached_prints(config, scale, nonlinearity, int(step))
    st.code(text, language="text", wrap_lines=True)
with right:
    st.markdown("A hook is ordinary Python, so it can `print`; `redirect_stdout` catches the text:")
    st.code(
        "def show(module, args, h):\n"
        f"    if step == {step}:\n"
        "        print(h.norm(), h[0])\n"
        "\n"
        "buf = io.StringIO()\n"
        "with redirect_stdout(buf):\n"
        "    model(input_data)\n"
        "text = buf.getvalue()", language="python", wrap_lines=True)

# --- 4. Node inspector -------------------------------------------------------
st.subheader("4 · What autograd saved for one node", anchor=False)
graph = run.graph
ops = [n.id for n in graph.op_nodes]
ids = [n.id for n in graph.nodes]
# Op nodes come in creation order: the last one of the last step makes the final hidden state.
last_step = [i for i in ops if i.startswith(f"L{L - 1}.t{T - 1}/")]
default = last_step[-1] if last_step else ops[0]  # fused LSTM: its layer node
ui.node_from_url(graph, default)
left, right = st.columns([5, 4], gap="large")
with left:
    node_id = st.selectbox(f"Node of this run's graph ({len(ids)} nodes)", ids, key="node",
                           bind="query-params",
                           format_func=lambda i: inspection.node_label(graph, i))
    details = inspection.node_details(run, node_id)
    st.markdown(f"**{details.id}**: `{details.op or details.kind}`  \n"
                f"inputs: {', '.join(f'`{i}`' for i in details.inputs) or 'none'}  \n"
                f"outputs: {', '.join(f'`{o}`' for o in details.outputs) or 'none'}")
    rows = [{"saved": s.name, "shape": str(s.shape) if s.shape is not None else "",
             **(s.stats or {}), "value": s.text or ""} for s in details.saved]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="saved_tensors")
    else:
        st.caption("This op saved nothing for backward: its gradient needs no forward values.")
with right:
    st.markdown("Every node of the graph is a live `grad_fn`. What it kept for `backward()` "
                "hangs off it as `_saved_*` attributes:")
    st.code(
        "fn = predictions.grad_fn\n"
        "# fn.next_functions leads to any node\n"
        "for name in dir(fn):\n"
        "    if name.startswith('_saved_'):\n"
        "        value = getattr(fn, name)\n"
        "        print(name, value)", language="python", wrap_lines=True)
    st.caption("Saved tensors are freed by `backward()` unless it is called with "
               "`retain_graph=True`; this graph has not been backward'd, so all are readable.")
