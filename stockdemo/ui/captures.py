"""Static vs dynamic's panels: torch.compile's captures as T changes, torch.export's outcomes."""

from __future__ import annotations

import streamlit as st

from stockdemo import static_graphs as static
from stockdemo.config import RunConfig
from stockdemo.i18n import number as written
from stockdemo.i18n import tr, trn
from stockdemo.ui import keys
from stockdemo.ui.caches import cached_export
from stockdemo.ui.metrics import Metric, metric_row


def outcome_box(outcome: static.ExportOutcome, success: str, failure: str, ops: bool = False) -> None:
    """An export outcome as measured: the exception's real type and text, or success.

    ``ops``: on success, list the exported graph's ops too.
    """
    if outcome.ok:
        st.success(tr("**Exported** in {seconds} s. {success} {note}", seconds=written(outcome.seconds, 2),
                      success=success, note=outcome.note), icon=":material/check_circle:")
        if ops and outcome.graph is not None:
            st.dataframe(static.ops_table(outcome.graph), hide_index=True, width="stretch")
    else:
        st.error(tr("**Failed** with `{error}` after {seconds} s. {failure}", error=outcome.error_name,
                    seconds=written(outcome.seconds, 2), failure=failure), icon=":material/error:")
        st.caption(tr("`{error}`, condensed:", error=outcome.error_type))
        st.code(outcome.message, language="text", wrap_lines=True)


def fx_graph(capture: static.CompileCapture) -> None:
    """The FX graph dynamo captured last: drawn when small enough, and always as code."""
    graph = capture.last_graph
    if static.drawn_node_count(graph) <= static.MAX_DRAWN_FX_NODES:
        st.graphviz_chart(static.fx_dot(graph), width="stretch",
                          alt=trn("FX graph captured by torch.compile: {n} op",
                                  "FX graph captured by torch.compile: {n} ops", graph.op_count))
    else:
        st.warning(tr("This FX graph has {count} ops: too many to draw here. Its code is below.",
                      count=graph.op_count), icon=":material/visibility_off:")
    if capture.symbolic:
        said = trn("{n} op, traced once for input shape {shape}. Orange notes are the weights it takes as "
                   "inputs. It runs again unchanged for any input matching that shape.",
                   "{n} ops, traced once for input shape {shape}. Orange notes are the weights it takes as "
                   "inputs. It runs again unchanged for any input matching that shape.",
                   graph.op_count, shape=graph.input_shape())
    else:
        said = trn("{n} op, traced once for input shape {shape}. Orange notes are the weights it takes as "
                   "inputs. It runs again unchanged for any input of exactly that shape, and only for "
                   "that shape.", "{n} ops, traced once for input shape {shape}. Orange notes are the "
                   "weights it takes as inputs. It runs again unchanged for any input of exactly that "
                   "shape, and only for that shape.", graph.op_count, shape=graph.input_shape())
    st.caption(said)
    with st.expander(tr("The captured graph as code (what dynamo recorded)")):
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
            st.caption(trn("A new cell is a new model: a new `torch.compile`, its count from 0 ({n} length "
                           "was tried with the last one).", "A new cell is a new model: a new "
                           "`torch.compile`, its count from 0 ({n} lengths were tried with the last one).",
                           len(session.seq_lens)))
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
    names = {"static": tr("torch.export, static shapes"), "dynamic": tr("torch.export, T marked dynamic"),
             "early_stop": tr("torch.export of the early-stop model"),
             "cond": tr("torch.export of its torch.cond rewrite (T = {T})", T=cond.seq_len)}
    what = tr("torch.compile: T = {T} is a new shape, dynamo traces `forward` (graph {graph}, limit {limit})",
              T=T, graph=graphs + 1, limit=static.recompile_limit())
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
        Metric(tr("Lengths since Capture"), written(len(capture.seq_lens)),
               help=tr("Every T this compiled model was called at since you pressed Capture.")),
        Metric(tr("Graphs captured"), written(len(capture.graphs))),
        Metric(tr("Recompiles"), written(capture.recompiles), help=tr("Captures after the first one.")),
        Metric(tr("Ran eagerly"), written(capture.eager_calls),
               help=tr("Calls past dynamo's recompile limit ({limit} graphs): no graph, plain PyTorch.",
                       limit=capture.limit)),
        Metric(tr("Tracing time"), tr("{seconds} s", seconds=written(capture.seconds, 2)),
               help=tr("All calls so far, measured live.")),
    ])


def recompiles(capture: static.CompileCapture) -> None:
    """What dynamo did on each call, what that says, and its warning at the recompile limit."""
    st.dataframe(static.compile_steps_table(capture), hide_index=True, width="stretch",
                 key="compile_steps")
    st.markdown(static.explain_recompiles(capture))
    if capture.warning:
        st.caption(tr("What torch logged when the limit was hit, word for word:"))
        st.code(capture.warning, language="text", wrap_lines=True)
