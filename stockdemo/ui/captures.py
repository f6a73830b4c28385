"""Static vs dynamic's panels: torch.compile's captures as T changes, torch.export's outcomes."""

from __future__ import annotations

import streamlit as st

from stockdemo import static_graphs as static
from stockdemo.config import RunConfig
from stockdemo.ui import keys
from stockdemo.ui.caches import cached_export
from stockdemo.ui.metrics import Metric, metric_row


def outcome_box(outcome: static.ExportOutcome, success: str, failure: str, ops: bool = False) -> None:
    """An export outcome as measured: the exception's real type and text, or success.

    ``ops``: on success, list the exported graph's ops too.
    """
    if outcome.ok:
        st.success(f"**Exported** in {outcome.seconds:.2f} s. {success} {outcome.note}",
                   icon=":material/check_circle:")
        if ops and outcome.graph is not None:
            st.dataframe(static.ops_table(outcome.graph), hide_index=True, width="stretch")
    else:
        st.error(f"**Failed** with `{outcome.error_name}` after {outcome.seconds:.2f} s. {failure}",
                 icon=":material/error:")
        st.caption(f"`{outcome.error_type}`, condensed:")
        st.code(outcome.message, language="text", wrap_lines=True)


def fx_graph(capture: static.CompileCapture) -> None:
    """The FX graph dynamo captured last: drawn when small enough, and always as code."""
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


_SESSION = keys.STATIC_SESSION


def static_captures(config: RunConfig,
                    fresh: bool) -> tuple[static.CompileCapture, dict[str, static.ExportOutcome]]:
    """This learner's torch.compile session called at ``config.seq_len``, and the exports at it.

    The session (``static.CompileSession``, per user, in session_state) lives from a press of
    Capture (``fresh``) until the next, or until the cell changes; it is called once each time
    T changes. A new T traces: a progress bar, right under the Capture button, names each step
    as it runs (Capture takes seconds). A T already captured only runs its graph and reads the
    exports from the cache, without a bar.
    """
    session = st.session_state.get(_SESSION)
    if fresh or session is None or config.replace(seq_len=session.config.seq_len) != session.config:
        if not fresh and session is not None:
            st.caption(f"A new cell is a new model: a new `torch.compile`, its count from 0 "
                       f"({len(session.seq_lens)} lengths were tried with the last one).")
        session = st.session_state[_SESSION] = static.CompileSession(config)
    T = config.seq_len
    cond = config.replace(seq_len=min(T, static.COND_MAX_T))
    steps = [("static", config), ("dynamic", config), ("early_stop", config), ("cond", cond)]
    exports: dict[str, static.ExportOutcome] = {}
    if T in session.seq_lens:
        if session.capture().steps[-1].seq_len != T:
            session.call(T)  # its graph's guards pass: it runs again, nothing is traced
        exports = {kind: cached_export(kind, at) for kind, at in steps}
        return session.capture(), exports
    graphs = len(session.capture().graphs)
    names = {"static": "torch.export, static shapes", "dynamic": "torch.export, T marked dynamic",
             "early_stop": "torch.export of the early-stop model",
             "cond": f"torch.export of its torch.cond rewrite (T = {cond.seq_len})"}
    what = (f"torch.compile: T = {T} is a new shape, dynamo traces `forward` (graph {graphs + 1}, "
            f"limit {static.recompile_limit()})")
    bar = st.progress(0.0, text=f"1/5 · {what}…")
    session.call(T)
    for i, (kind, at) in enumerate(steps, start=2):
        bar.progress((i - 1) / 5, text=f"{i}/5 · {names[kind]}…")
        exports[kind] = cached_export(kind, at)
    bar.empty()
    return session.capture(), exports


def recompile_count(capture: static.CompileCapture) -> None:
    """How many graphs the lengths tried took, in one row (drawn by the controls, kept in view)."""
    metric_row([
        Metric("Lengths since Capture", len(capture.seq_lens),
               help="Every T this compiled model was called at since you pressed Capture."),
        Metric("Graphs captured", len(capture.graphs)),
        Metric("Recompiles", capture.recompiles, help="Captures after the first one."),
        Metric("Ran eagerly", capture.eager_calls,
               help=f"Calls past dynamo's recompile limit ({capture.limit} graphs): no graph, "
                    "plain PyTorch."),
        Metric("Tracing time", f"{capture.seconds:.2f} s", help="All calls so far, measured live."),
    ])


def recompiles(capture: static.CompileCapture) -> None:
    """What dynamo did on each call, what that says, and its warning at the recompile limit."""
    st.dataframe(static.compile_steps_table(capture), hide_index=True, width="stretch",
                 key="compile_steps")
    st.markdown(static.explain_recompiles(capture))
    if capture.warning:
        st.caption("What torch logged when the limit was hit, word for word:")
        st.code(capture.warning, language="text", wrap_lines=True)
