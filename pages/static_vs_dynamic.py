"""Static vs dynamic: the same model under eager autograd, torch.compile and torch.export, live."""

import inspect
import time

import pandas as pd
import streamlit as st

from stockdemo import static, ui
from stockdemo.config import CELL, SEQ_LEN, RunConfig
from stockdemo.render import render_dot

ui.setup_page(
    "Static vs dynamic", ":material/compare_arrows:",
    "Press **Capture static graphs**, then move **Sequence length T** a few times and watch "
    "the recompile count climb: `torch.compile` captures one fixed graph per shape, while eager "
    "PyTorch simply records a new graph on every run.",
    __file__,
)

HISTORY = 4  # lengths replayed through torch.compile: each new one costs a capture
# Exporting the torch.cond rewrite traces two subgraphs per step (~0.3 s each here),
# so it runs at a short length, said on the page.
COND_MAX_T = 3


@st.cache_data(max_entries=64, show_spinner=False)
def compile_capture(config: RunConfig, seq_lens: tuple[int, ...]) -> static.CompileCapture:
    return static.compile_capture(config, seq_lens)


@st.cache_data(max_entries=64, show_spinner=False)
def export_outcome(kind: str, config: RunConfig) -> static.ExportOutcome:
    exports = {"static": static.export_static, "dynamic": static.export_dynamic_seq_len,
               "early_stop": static.export_early_stop, "cond": static.export_cond_stop}
    return exports[kind](config)


@st.cache_data(max_entries=64, show_spinner=False)
def early_stop_runs(config: RunConfig) -> tuple[tuple[static.EagerRun, str], ...]:
    """Both eager runs with their DOT drawings."""
    return tuple((run, render_dot(run.graph, "auto").dot) for run in static.early_stop_eager(config))


def outcome_box(outcome: static.ExportOutcome, success: str, failure: str) -> None:
    """An export outcome as measured: the exception's real type and text, or success."""
    if outcome.ok:
        st.success(f"**Exported** in {outcome.seconds:.2f} s. {success} {outcome.note}",
                   icon=":material/check_circle:")
    else:
        st.error(f"**Failed** with `{outcome.error_name}` after {outcome.seconds:.2f} s. {failure}",
                 icon=":material/error:")
        st.caption(f"`{outcome.error_type}`, condensed:")
        st.code(outcome.message, language="text", wrap_lines=True)


def ops_table(graph: static.StaticGraph) -> pd.DataFrame:
    rows = [{"node": op.name, "op": op.label, "output shape": op.shape}
            for op in graph.ops if op.kind in ("input", "op", "branch")]
    return pd.DataFrame(rows)


ui.url_messages("static_vs_dynamic", (SEQ_LEN, CELL))
c1, c2 = st.columns([3, 2])
with c1:
    seq_len = int(ui.knob_widget(SEQ_LEN))
with c2:
    cell = ui.knob_widget(CELL)
config = RunConfig(seq_len=seq_len, cell=cell)

# The lengths this session tried, in order, for this cell (per user, so in session_state).
history = st.session_state.setdefault("static_history", {"cell": cell, "seq_lens": []})
if history["cell"] != cell:
    history.update(cell=cell, seq_lens=[])
if not history["seq_lens"] or history["seq_lens"][-1] != seq_len:
    history["seq_lens"] = (history["seq_lens"] + [seq_len])[-HISTORY:]
tried = tuple(history["seq_lens"])

if st.button("Capture static graphs", key="static_capture", type="primary",
             icon=":material/play_arrow:",
             help="Runs torch.compile and torch.export on this model. About a second or two per "
                  "new setting, so they start on request; later changes re-run them."):
    st.session_state["static_on"] = True
captures_on = st.session_state.get("static_on", False)

started = time.perf_counter()
result = ui.cached_run(config)
rendering = ui.cached_render(config, "auto")

st.subheader("One model, two kinds of graph", anchor=False)
# The unrolled eager graph runs across (time), the FX graph runs down: give width to the first.
left, right = st.columns([3, 2], gap="large")
with left:
    st.markdown(f"**Eager autograd: recorded while this run's Python ran** (T = {seq_len})")
    st.graphviz_chart(rendering.dot, width="stretch",
                      alt=f"Autograd graph of this run: {result.graph.stats['nodes']} nodes")
    st.caption(rendering.caption + ". A new graph like this is recorded on every call, "
               "whatever the shapes or the branches taken.")
with right:
    st.markdown(f"**torch.compile: the static FX graph dynamo captured for T = {seq_len}**")
    if not captures_on:
        st.info("Press **Capture static graphs** above to trace this model with `torch.compile` "
                "(a recording-only backend: no code is generated) and `torch.export`.",
                icon=":material/touch_app:")
        capture = None
    else:
        with st.spinner("torch.compile is tracing the model…"):
            capture = compile_capture(config, tried)
        graph = capture.last_graph
        if static.drawn_node_count(graph) <= static.MAX_DRAWN_FX_NODES:
            st.graphviz_chart(static.fx_dot(graph), width="stretch",
                              alt=f"FX graph captured by torch.compile: {graph.op_count} ops")
        else:
            st.warning(f"This FX graph has {graph.op_count} ops: too many to draw here. "
                       "Its code is below.", icon=":material/visibility_off:")
        reach = ("any input matching that shape" if capture.symbolic
                 else "any input of exactly that shape, and only for that shape")
        st.caption(f"{graph.op_count} ops, traced once for input shape {graph.input_shape()}. "
                   f"Orange notes are the weights it takes as inputs. It runs again unchanged "
                   f"for {reach}.")
        with st.expander("The captured graph as code (what dynamo recorded)"):
            st.code(graph.code, language="python")

if capture is not None:
    st.subheader("Recompiles as T changes", anchor=False)
    distinct = len(set(tried))
    m = st.columns(4)
    m[0].metric("Lengths you tried", distinct, help=f"The last {HISTORY} settings of T on this page.")
    m[1].metric("Graphs captured", len(capture.graphs))
    m[2].metric("Recompiles", capture.recompiles, help="Captures after the first one.")
    m[3].metric("Capture time", f"{capture.seconds:.2f} s",
                help="Measured when this sequence of lengths was first captured.")
    steps = pd.DataFrame([{"call": i + 1, "T": s.seq_len,
                           "what dynamo did": "captured a new graph" if s.new_graph
                           else f"reused graph {s.graph_index + 1}",
                           "graphs so far": s.graphs_so_far} for i, s in enumerate(capture.steps)])
    st.dataframe(steps, hide_index=True, width="stretch")
    if distinct == 1:
        st.caption("Move **Sequence length T**: each length you try is replayed here, in "
                   "order, through one model wrapped in `torch.compile`.")
    elif len(capture.graphs) == distinct:
        st.markdown(
            "Each new T broke a **guard**, dynamo's check that the input still has the shape it "
            "traced, so it traced the model again: one static graph per length. Going back to a "
            "length already seen reuses its graph. Every graph holds T as a fixed number "
            f"(input shapes {', '.join(g.input_shape() for g in capture.graphs)}), never as a "
            f"symbol. Past {static.recompile_limit()} graphs dynamo would stop compiling and run "
            "the model eagerly.")
    elif capture.symbolic:
        st.markdown(
            f"{distinct} lengths needed only {len(capture.graphs)} graphs: dynamo made T a "
            "symbol (dynamic shapes) and one graph served several lengths.")
    else:
        st.markdown(
            f"{distinct} lengths, but only {len(capture.graphs)} graphs: dynamo reached its "
            f"limit of {static.recompile_limit()} graphs and ran the other calls eagerly.")

st.subheader("torch.export: the whole graph, ahead of time", anchor=False)
if not captures_on:
    st.info("Press **Capture static graphs** to run `torch.export` live.", icon=":material/touch_app:")
else:
    with st.spinner("torch.export is tracing the model…"):
        outcomes = {kind: export_outcome(kind, config) for kind in ("static", "dynamic")}
    e1, e2 = st.columns(2, gap="large")
    with e1:
        st.markdown(f"**Static shapes:** `torch.export.export(model, (x,))`, x of shape "
                    f"`{tuple(result.inputs.shape)}`")
        outcome_box(outcomes["static"], "Every op has a fixed shape, known before any data arrives:",
                    "Even fixed shapes were refused: the message says which part export could "
                    "not trace.")
        if outcomes["static"].ok:
            st.dataframe(ops_table(outcomes["static"].graph), hide_index=True, width="stretch")
    with e2:
        st.markdown("**Dynamic T:** the same call with "
                    "`dynamic_shapes={'x': {1: Dim('T', min=2, max=200)}}`")
        if seq_len == 1:
            why = ("Here the example itself has T = 1, and export always fixes sizes of 0 and 1 "
                   "to constants: try T of 2 or more to see what the recurrent layer does.")
        elif "specialized" in (outcomes["dynamic"].message or ""):
            why = ("Export promised a graph valid for *any* T, then found the traced code fixes "
                   "T to this run's value (the recurrent layer is traced as a fixed number of "
                   "steps), so it refused rather than ship a graph that is wrong for other "
                   "lengths.")
        else:
            why = "Export could not keep T as a symbol; torch's message below says why."
        outcome_box(outcomes["dynamic"], "One exported program serves every T from 2 to 200.", why)
        if outcomes["dynamic"].ok and outcomes["dynamic"].graph is not None:
            st.dataframe(ops_table(outcomes["dynamic"].graph), hide_index=True, width="stretch")

st.subheader("When the graph depends on the data", anchor=False)
runs = early_stop_runs(config)
st.markdown(
    "A variant of the model stops reading the sequence once the hidden state grows large: an "
    f"`if` on a tensor's **value** (threshold {runs[0][0].threshold}, set from this input). Eager PyTorch "
    "just runs the Python, so two inputs record two differently sized graphs:")
st.code(inspect.getsource(static.EarlyStopRNN.run_steps).replace("    def", "def", 1).replace(
    "\n    ", "\n"), language="python")
cols = st.columns(2, gap="large")
for col, (run, dot) in zip(cols, runs, strict=True):
    with col:
        stats = run.graph.stats
        st.markdown(f"**{run.label}** (x × {run.scale:g}): ran **{run.steps} of {run.seq_len}** "
                    f"steps, **{stats['nodes']} nodes** recorded")
        st.graphviz_chart(dot, width="stretch",
                          alt=f"Autograd graph of the {run.label}: {stats['nodes']} nodes")
if runs[0][0].steps == runs[1][0].steps:
    st.caption("At this length both inputs ran the same number of steps; try T of 3 or more to "
               "see them part ways.")
if captures_on:
    cond_config = config.replace(seq_len=min(seq_len, COND_MAX_T))
    with st.spinner("torch.export is tracing the early-stop model…"):
        early_stop = export_outcome("early_stop", config)
        cond = export_outcome("cond", cond_config)
    d1, d2 = st.columns(2, gap="large")
    with d1:
        st.markdown("**torch.export of the early-stop model**")
        outcome_box(early_stop,
                    "Export traced a graph with the branch decided for this input.",
                    "While tracing, the norm is a symbol with no value, so Python's `if` cannot "
                    "pick a branch: export needs the decision written into the graph.")
    with d2:
        st.markdown(f"**The same stop rewritten with `torch.cond`** (exported at "
                    f"T = {cond_config.seq_len}: each step adds a cond and two traced branches)")
        outcome_box(cond,
                    "Both branches now sit in the graph and each step picks one at run time; "
                    "the loop always runs all T steps (the skipped ones copy `h`).",
                    "Even the `torch.cond` form was refused.")
        st.code(inspect.getsource(static.CondStopRNN.run_steps).replace("    def", "def", 1).replace(
            "\n    ", "\n"), language="python", wrap_lines=True)

st.subheader("When static graphs win", anchor=False)
st.markdown(
    "Fair is fair. A graph known in full before it runs can be **optimised as a whole**: "
    "compilers fuse ops, plan memory and generate kernels for it (what `torch.compile`'s real "
    "backends do after the capture you saw). And it can be **deployed without Python**: an "
    "exported program is saved and run on servers, phones or accelerators that never import "
    "your model's code. Dynamic graphs win while you write, change and debug the model; static "
    "graphs win once it stops changing and has to run fast, or somewhere else. PyTorch now gives "
    "you both from the same code, as long as the code keeps shapes and branches the tracer can "
    "follow.")
st.caption(f"This page update: {(time.perf_counter() - started) * 1e3:.0f} ms on the server.")
