"""Composite elements a page places with one call: pieces made of several Streamlit elements."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from typing import NamedTuple

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from stockdemo import figures, static, train, workers
from stockdemo.config import EPOCHS, MAX_TRAIN_SECONDS, RunConfig, TrainConfig
from stockdemo.data import Dataset
from stockdemo.diff import describe_diff, graph_diff
from stockdemo.graph import Graph, count_text
from stockdemo.live import RunResult
from stockdemo.train import TrainResult
from stockdemo.ui.caches import cached_export

# Sent together, the graph and a plotly chart redraw in one browser frame and
# the graph waits ~0.2 s for plotly. A pause before the chart lets the browser
# draw the graph first (bench/bench_browser.py, default config: slider to
# graph 0.49-0.53 s -> 0.36-0.39 s; the chart follows as before). Only when
# the server answered quickly and runs nothing else: on a busy server the pause
# only adds to every learner's wait. Counting only a slow rerun (over 0.25 s)
# as busy, a move in a 30-session burst that got through in 0.2 s still paused.
GRAPH_FIRST_PAUSE_S = 0.1
PAUSE_ONLY_BELOW_S = 0.25
# Streamlit runs each session's script run in a thread of this name, started for
# the run and ended with it (ScriptRunner.start): the runs this process has open.
SCRIPT_THREAD = "ScriptRunner.scriptThread"


def runs_in_progress() -> int:
    """How many script runs this server process is in the middle of, this one included."""
    return sum(1 for t in threading.enumerate() if t.name == SCRIPT_THREAD)


class Metric(NamedTuple):
    """One figure of a metric row: a label, its value, a change since last time, a tooltip."""

    label: str
    value: object
    delta: int | float | None = None
    help: str | None = None


def metric_row(metrics: Iterable[Metric], where=st) -> None:
    """Figures side by side, as ``st.metric`` draws them, sent as one element.

    Each ``st.metric`` is an element of its own, and each element costs the
    server its own message on every rerun: the Playground's six took 3.3 ms of
    a 22 ms slider move (server CPU, one session moving between two cached
    settings; none at all: 19.4 ms). A description list, styled in
    ``frame.FRAME_CSS``: screen readers read each label with its value.
    """
    items = []
    for m in metrics:
        tip = ""
        if m.help:
            text = html.escape(m.help, quote=True)
            tip = (f' <span class="sd-help" tabindex="0" role="img" aria-label="{text}" '
                   f'title="{text}">?</span>')
        change = ""
        if m.delta is not None:
            sign = "up" if m.delta > 0 else "down" if m.delta < 0 else "flat"
            arrow = {"up": "↑ +", "down": "↓ −", "flat": "± "}[sign]
            change = (f'<dd class="sd-delta sd-{sign}" data-testid="sdMetricDelta">'
                      f'{arrow}{abs(m.delta):,}</dd>')
        items.append(f'<div class="sd-metric" data-testid="sdMetric">'
                     f'<dt data-testid="sdMetricLabel">{html.escape(m.label)}{tip}</dt>'
                     f'<dd data-testid="sdMetricValue">{html.escape(str(m.value))}</dd>{change}</div>')
    where.markdown(f'<dl class="sd-metrics">{"".join(items)}</dl>', unsafe_allow_html=True)


def table(data: list[dict] | pd.DataFrame | pa.Table, **kwargs) -> None:
    """``st.dataframe`` without its index, given an Arrow table (rows and frames converted here).

    Given rows or a DataFrame, Streamlit converts them through pandas on every
    rerun (its converter alone: 6.6 ms for the Debugging page's one-row list of
    dicts, 0.05 ms for an Arrow table; the page's move, measured whole: 27.3 ->
    26.0 ms of server CPU). A table shown on every rerun from a cache is best
    converted once, in the cache (the Lab's experiments).
    """
    if isinstance(data, pd.DataFrame):
        data = pa.Table.from_pandas(data, preserve_index=False)
    elif not isinstance(data, pa.Table):
        data = pa.Table.from_pylist(data)
    st.dataframe(data, hide_index=True, width="stretch", **kwargs)


def aside(text: str, code: str, note: str = "", where=st) -> None:
    """An explanation beside a live result: text, the Python it is about, a small note.

    One Markdown element, not three (markdown, code, caption): a page in a fragment
    sends every element again on each slider move, and these do not change with it.
    """
    parts = [text, f"```python\n{code.strip()}\n```"]
    if note:
        parts.append(f":gray[:small[{note}]]")
    where.markdown("\n\n".join(parts))


def chart_after_graph(fig: go.Figure, alt: str, rerun_started: float) -> None:
    """A full-width plotly chart, sent a moment after the graph above it.

    ``rerun_started``: ``time.perf_counter()`` when this rerun began.
    """
    if time.perf_counter() - rerun_started < PAUSE_ONLY_BELOW_S and runs_in_progress() <= 1:
        time.sleep(GRAPH_FIRST_PAUSE_S)
    st.plotly_chart(fig, width="stretch", alt=alt)


# Training runs in a whole-page run, never in a fragment's: a click inside a
# fragment waits for the fragment's run to end (Streamlit does not interrupt a
# run for it), so Stop would only land after training. A Stop drawn outside the
# fragment reruns the page, which interrupts the training loop at its next element.
_JOB, _RESULT, _PARTIAL, _STOPPED = "train_job", "train_result", "train_partial", "train_stopped"
_PRESSED = "train_pressed"
# While a run trains, its loss chart is redrawn when an epoch ends at least this long after the
# last redraw, and the progress bar as often: so the curve moves as the learner watches, at
# least 4 times a second (issue 25; 0.25 s gave 3.1 a second, the wait for the next epoch
# added to it: bench/bench_train.py). Only the runs that hold a worker redraw (two on two
# cores); the rest wait in line and hear their place once a second.
CHART_EVERY_S = 0.2
BAR_EVERY_S = 0.2
PANEL_CHART_HEIGHT = 300  # px: beside the Train button, the whole panel on screen at 1440x900
# Streamlit's own Stop in the header stops the script, not the run in its worker: while a run
# trains, the panel's Stop is the only one shown.
_ONE_STOP_CSS = "<style>[data-testid='stStatusWidget'] button { display: none; }</style>"


class TrainPanel(NamedTuple):
    """Where the Train button's run draws, beside the button: Stop, progress and words, the curve."""

    stop: DeltaGenerator  # next to the Train button
    status: DeltaGenerator  # under it: the progress bar, then what happened
    chart: DeltaGenerator  # beside it: the data, then the live loss curve, then the final one


def train_button(dataset: Dataset, config: TrainConfig, key: tuple,
                 data_figure: go.Figure) -> tuple[TrainResult | None, TrainPanel]:
    """The Train button and its panel -> (the result trained on ``key``, if any; the panel).

    ``key`` names the data and settings; a press starts ``training_run`` in a page run, which
    draws into the panel. Before any run the panel shows ``data_figure``; after one, the loss
    curves and what they say (``train.story``); after Stop, the curves so far.
    """
    workers.shared_pool()  # started on the page's first visit, so warm by the first press
    refusal = train.too_big(dataset, config)
    if refusal:
        st.error(refusal, icon=":material/hourglass_disabled:")
    left, right = st.columns([1, 1], gap="large")
    with left:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.button("Train", key="train_go", type="primary", icon=":material/play_arrow:",
                      disabled=refusal is not None or training_pending(), on_click=_press,
                      args=(key, dataset, config))
            stop = st.empty()
        st.caption(f"A fresh model every time, at most {EPOCHS.high} epochs and "
                   f"{MAX_TRAIN_SECONDS:.0f} s. Same settings and seed: same curves.")
        status = st.container()
    panel = TrainPanel(stop, status, right.empty())
    partial = st.session_state.pop(_STOPPED, None)
    stored = st.session_state.get(_RESULT)
    result = stored[1] if stored and stored[0] == key else None
    if training_pending():  # training_run draws the rest, the live curve over the data at its first epoch
        panel.chart.plotly_chart(data_figure, width="stretch", key="prices_chart")
        return None, panel
    if partial is not None:
        status.warning(train.stopped_text(partial), icon=":material/stop_circle:")
        if partial:
            panel.chart.plotly_chart(figures.loss_figure(partial, PANEL_CHART_HEIGHT), width="stretch",
                                     key="loss_stopped")
            return None, panel
    elif result is not None:
        status.markdown(train.story(result))
        panel.chart.plotly_chart(figures.loss_figure(result.history, PANEL_CHART_HEIGHT), width="stretch",
                                 key="loss_chart")
        return result, panel
    elif stored:
        status.caption("The settings changed since the last training: press **Train** to train on these.")
    panel.chart.plotly_chart(data_figure, width="stretch", key="prices_chart")
    return None, panel


def _press(key: tuple, dataset: Dataset, config: TrainConfig) -> None:
    st.session_state.pop(_RESULT, None)
    st.session_state[_JOB] = (key, dataset, config)
    st.session_state[_PRESSED] = True


def leave_for_training() -> None:
    """First thing in the Train page's fragment: after a press of Train, go straight to the
    whole-page run that trains, without drawing this fragment first.

    With thirty presses at once, the fragment drawn for nothing delayed everyone's
    place in line (bench/load.py train).
    """
    if st.session_state.pop(_PRESSED, False):
        st.rerun(scope="app")


def training_pending() -> bool:
    return _JOB in st.session_state


def _stop() -> None:
    st.session_state.pop(_JOB, None)
    st.session_state[_STOPPED] = st.session_state.pop(_PARTIAL, [])


def training_run(panel: TrainPanel | None) -> None:
    """The training a Train press asked for, live, in ``panel``: Stop, progress, the loss curves.

    ``panel`` is the Train button's (``train_button``), drawn by the page's fragment in this same
    page run; None (the fragment drew no button) writes here instead.
    """
    if _JOB not in st.session_state:
        return
    key, dataset, config = st.session_state[_JOB]
    if panel is None:
        panel = TrainPanel(st.empty(), st.container(), st.empty())
    st.html(_ONE_STOP_CSS)
    panel.stop.button("Stop", key="train_stop", icon=":material/stop:", on_click=_stop,
                      help="Stops training; the curves so far stay on the page.")
    with panel.status:
        bar = st.progress(0.0, text="Starting: building a fresh model...")
    history: list[train.Progress] = []
    drawn_at = bar_at = 0.0
    # In a worker process, off the server's GIL. Closing the stream (the loop ends, Stop's
    # rerun interrupts it, the tab closes) takes the run out of the queue or stops its worker.
    try:
        with closing(workers.shared_pool().train(dataset, config)) as events:
            for event in events:
                if isinstance(event, workers.Queued):
                    bar.progress(0.0, text=f"Waiting for a training worker: number {event.position} "
                                           f"in line ({event.workers} training at once here)")
                    continue
                if isinstance(event, train.TrainResult):
                    st.session_state[_RESULT] = (key, event)
                    continue
                if event.val_loss is not None:
                    history.append(event)
                    st.session_state[_PARTIAL] = list(history)
                    if time.monotonic() - drawn_at >= CHART_EVERY_S:
                        # unkeyed: the browser keeps the chart and redraws it in place
                        panel.chart.echarts_chart(figures.live_loss_option(history), renderer="svg",
                                                  height=PANEL_CHART_HEIGHT,
                                                  alt="Line chart of the training and validation loss "
                                                      f"per epoch, {len(history)} epochs so far.")
                        drawn_at = time.monotonic()
                if time.monotonic() - bar_at >= BAR_EVERY_S:  # the first report at once
                    bar.progress(min(1.0, event.fraction), text=train.progress_text(event))
                    bar_at = time.monotonic()
    except (workers.TrainingRefused, workers.WorkerLost) as err:
        for done in (_JOB, _PARTIAL):
            st.session_state.pop(done, None)
        bar.empty()
        panel.stop.empty()
        panel.status.error(str(err), icon=":material/error:")
        return
    for done in (_JOB, _PARTIAL):
        st.session_state.pop(done, None)
    _until_sent(SENT_WITHIN_S)
    st.rerun()


# The rerun that shows a training result drops every message this run queued and the
# server had not sent yet. Under 30 presses the server sent a training run's page
# 0.6 s and more behind the script, so a run of 0.3-0.5 s lost its whole progress and
# its learner saw nothing happen until the result (bench/load.py train: one session of
# 30 in four of eight runs). A fixed pause did not help and lengthened every run.
SENT_WITHIN_S = 2.0


def _until_sent(timeout: float) -> None:
    """Wait until what this script run queued has gone out to the browser (at most ``timeout``).

    A marker goes through the server's event loop after every message queued before it;
    then the session's queue must be empty. Idle, that takes a few milliseconds. Where
    there is no runtime (AppTest), returns at once.
    """
    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return
    runtime = Runtime.instance()
    session = runtime.get_app_session(ctx.session_id)
    if session is None:
        return
    deadline = time.monotonic() + timeout
    reached = threading.Event()
    try:
        runtime._get_async_objs().eventloop.call_soon_threadsafe(reached.set)
        queue = session._browser_queue  # private: checked by tests/test_page_train.py
    except (AttributeError, RuntimeError):
        return
    if not reached.wait(timeout):
        return
    while not queue.is_empty() and time.monotonic() < deadline:
        time.sleep(0.01)


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


_SESSION = "static_session"


def static_captures(config: RunConfig,
                    fresh: bool) -> tuple[static.CompileCapture, dict[str, static.ExportOutcome]]:
    """This learner's torch.compile session called at ``config.seq_len``, and the exports at it.

    The session (``static.CompileSession``, per user, in session_state) lives from a press of
    Capture (``fresh``) until the next, or until the cell changes; it is called once each time
    T changes. A new T traces: a progress bar, right under the Capture button, names each step
    as it runs (Capture itself took 4.3 s with nothing on screen). A T already captured only
    runs its graph and reads the exports from the cache, without a bar.
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


def change_since_previous(config: RunConfig, graph: Graph) -> tuple[str, int | None, tuple[str, ...]]:
    """What changed since this session's previous run with other settings (kept per user).

    A rerun with the same settings (a click on a node, the view or a panel
    changed) is not a new run: it keeps reporting the last change.
    -> (a sentence, the change in node count; None on the session's first run,
    the ids of the nodes added since the previous run, for the graph view to mark)
    """
    previous = st.session_state.get("playground_previous")
    if previous is not None and previous["config"] == config:
        return previous["change"], previous["delta"], previous["new"]
    if previous is None:
        change, delta, new = "First run of this session: every node is new.", None, ()
    else:
        diff = graph_diff(previous["graph"], graph)
        change = describe_diff(diff, previous["config"].__dict__, config.__dict__)
        delta = graph.counts.nodes - previous["graph"].counts.nodes
        new = tuple(n.id for n in diff.added_nodes)
    st.session_state["playground_previous"] = {"config": config, "graph": graph, "change": change,
                                               "delta": delta, "new": new}
    return change, delta, new


def run_figures(result: RunResult, delta: int | None, elapsed_ms: float) -> list[Metric]:
    """Output shape, parameters, graph size and times of one run: the stage draws them over its graph."""
    counts = result.graph.counts
    return [
        Metric("Output shape", str(tuple(result.predictions.shape))),
        Metric("Parameters", f"{result.parameter_count:,}",
               help=f"Numbers the model learns, held in the graph's "
                    f"{count_text(counts.parameters, 'parameter')}."),
        Metric("Graph nodes", f"{counts.nodes:,}", delta=delta, help=counts.summary() + "."),
        Metric("Graph edges", f"{counts.edges:,}", help="Arrows between nodes: which node's output "
                                                        "feeds which."),
        Metric("Run + capture", f"{result.timings_ms['forward'] + result.timings_ms['capture']:.0f} ms",
               help="Forward pass and graph capture, measured on the server when this config first ran."),
        Metric("This page update", f"{elapsed_ms:.0f} ms", help="Including cache look-ups."),
    ]


def run_downloads(result: RunResult, dot: Callable[[], str]) -> None:
    """The run's graph as DOT and JSON, and its predictions as CSV.

    ``dot`` builds the DOT text when the button is pressed: at 11,000 nodes it
    took a tenth of a second of every slider move. A press runs nothing else
    (``on_click="ignore"``): a rerun of the page on each download cost a whole
    run, and every run that ends brings the made file closer to being dropped
    before the browser fetches it (Streamlit drops it after two).
    """
    config = result.config
    downloads = st.container(horizontal=True)
    downloads.download_button("Download DOT", dot,
                              file_name=f"graph_{config.cell}_T{config.seq_len}.dot",
                              mime="text/vnd.graphviz", icon=":material/download:", on_click="ignore")
    # Built only when clicked: the JSON of an 11,000-node graph takes longer than the run.
    downloads.download_button("Download graph JSON", lambda: figures.graph_json(result.graph),
                              file_name=f"graph_{config.cell}_T{config.seq_len}.json",
                              mime="application/json", icon=":material/download:", on_click="ignore")
    downloads.download_button("Download predictions CSV", lambda: figures.predictions_csv(result),
                              file_name="predictions.csv", mime="text/csv",
                              icon=":material/download:", on_click="ignore")
