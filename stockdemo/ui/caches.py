"""Results shared by every session, cached on the settings that made them.

``st.cache_resource`` for objects handed out as they are (read them, never
modify them); ``st.cache_data`` for values each caller gets a copy of.
``held`` for the large ones (runs, pictures, replays, learners' runs): handed
out as they are too, and bounded in bytes as well as in entries (``stockdemo/lru.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from stockdemo import figures, lab
from stockdemo import static_graphs as static
from stockdemo.code.view import drawing_of_record, drawing_of_run
from stockdemo.config import PRINT_STEP, RunConfig, TrainConfig
from stockdemo.graph import Graph
from stockdemo.graph.diff import describe_diff, graph_diff
from stockdemo.graph.recorder import CODE_FILE
from stockdemo.i18n import Message, later
from stockdemo.lab import figures as lab_figures
from stockdemo.layout.picture import Picture, picture_bytes
from stockdemo.layout.views import picture_of_graph
from stockdemo.lessons import Answer, Step
from stockdemo.live import inspection
from stockdemo.live.run import RunResult, run, size_sweep
from stockdemo.lru import ByteLRU, held_budget
from stockdemo.render.dot import Rendering, render_dot
from stockdemo.render.payload import static_payload
from stockdemo.render.said import Said
from stockdemo.replay.trace import Trace
from stockdemo.sandbox import CodeRun, run_code
from stockdemo.train import prices as data

# Every session's large values (runs, pictures, replays, learners' runs) in one byte budget,
# so it goes to whatever was used last, whichever page it serves. The payloads' parts that
# depend on the picture alone are kept per picture: a click on a node reruns the page, and a
# drag of T crosses dozens of pictures and comes back over them. Kept for as many pictures as
# the pages' picture caches hold (cached_picture: 48, and the Playground's T at its defaults,
# 199, kept for good), within a quarter of the budget.
HELD = ByteLRU(held_budget, per_object_entries=256, per_object_share=0.25)
held, clear_held, held_status = HELD.cache, HELD.clear, HELD.status


def cached_static_payload(picture: Picture) -> tuple[Said, dict[str, int]]:
    """``render.payload.static_payload``, kept per picture: hand it to ``view_json(statics=)``."""
    return HELD.per_object(picture, static_payload, _payload_bytes)


def _payload_bytes(built: tuple[Said, dict[str, int]]) -> int:
    return built[0].size + sys.getsizeof(built[1])  # the index's ids are the picture's own strings


# ``hash_funcs`` for the caches below: a config is hashed by its repr, which names every
# field; Streamlit's own hash of a dataclass is a deep copy, dear for a handful of ints.
CONFIGS = dict.fromkeys((RunConfig, TrainConfig), repr)


# Runs and pictures kept for the life of the process, whatever the caches below evict: the
# settings a lecture's first "everyone drag T" crosses (stage_route.warm_stage), and only those.
_KEPT_RUNS: dict[RunConfig, RunResult] = {}
_KEPT_PICTURES: dict[tuple[RunConfig, str], Picture] = {}


def cached_run(config: RunConfig) -> RunResult:
    """Shared by all sessions: read it, never train or modify it."""
    kept = _KEPT_RUNS.get(config)
    return kept if kept is not None else _run(config)


@held(max_entries=48)
def _run(config: RunConfig) -> RunResult:
    return run(config)


def cached_picture(config: RunConfig, view: str) -> Picture:
    """The run's graph laid out for the graph view, every node placed (never folded).

    Shared by all sessions: read it, never modify it.
    """
    kept = _KEPT_PICTURES.get((config, view))
    return kept if kept is not None else _picture(config, view)


@held(max_entries=48, size=picture_bytes)
def _picture(config: RunConfig, view: str) -> Picture:
    return picture_of_graph(cached_run(config).graph, view)


def kept(config: RunConfig, view: str) -> bool:
    """``config``'s run and its picture for ``view`` are kept for good (``keep_run``): free to read."""
    return (config, view) in _KEPT_PICTURES and config in _KEPT_RUNS


def keep_run(config: RunConfig, view: str) -> Picture:
    """Run ``config`` and lay it out for ``view`` once, and keep both for the life of the process."""
    result = _KEPT_RUNS.get(config) or run(config)
    picture = _KEPT_PICTURES.get((config, view)) or picture_of_graph(result.graph, view)
    _KEPT_RUNS[config] = result
    _KEPT_PICTURES[(config, view)] = picture
    return picture


FIRST_RUN = later("First run of this session: every node is new.")


@held(max_entries=512)
def cached_change(before: RunConfig, after: RunConfig, *, before_graph: Graph, after_graph: Graph
                  ) -> tuple[Message, int, tuple[str, ...]]:
    """From the run of ``before`` to the run of ``after``: (what changed in a sentence, the change
    in node count, the ids of the nodes added). Shared by every session moving between the same
    two settings (a class moving T together); the graphs are those settings' runs (not keyed)."""
    diff = graph_diff(before_graph, after_graph)
    return (describe_diff(diff, before.__dict__, after.__dict__),
            after_graph.counts.nodes - before_graph.counts.nodes, tuple(n.id for n in diff.added_nodes))


def change_since(previous: dict | None, config: RunConfig, graph: Graph) -> dict:
    """The record of a run with other settings than ``previous``'s (None: a session's first run):
    ``config``, ``graph``, ``change`` (a sentence), ``delta`` (nodes; None on a first run) and
    ``new`` (the ids of the nodes added). Settings equal to ``previous``'s are no new run: it is
    returned as it is, and keeps reporting the last change."""
    if previous is not None and previous["config"] == config:
        return previous
    if previous is None:
        change, delta, new = FIRST_RUN, None, ()
    else:
        change, delta, new = cached_change(previous["config"], config,
                                           before_graph=previous["graph"], after_graph=graph)
    return {"config": config, "graph": graph, "change": change, "delta": delta, "new": new}


@held(max_entries=16)
def cached_trace(config: RunConfig) -> Trace:
    """The run replayed with hooks (forward order, backward order and norms, source lines)."""
    return drawing_of_run(config)[1]


@st.cache_data(max_entries=96, show_spinner=False, hash_funcs=CONFIGS)
def cached_render(config: RunConfig, view: str) -> Rendering:
    return render_dot(cached_run(config).graph, view)


@st.cache_resource(max_entries=192, show_spinner=False, hash_funcs=CONFIGS)
def cached_figure(kind: str, config: RunConfig) -> go.Figure:
    """The Playground's plotly figures, built once per config (plotly's checks are slow).

    A resource, not data: unpickling a cached go.Figure re-validates it, which
    costs as much as building it. Shared by all sessions: never modify it.
    """
    result = cached_run(config)
    if kind == "predictions":
        return figures.predictions_figure(result)
    if kind == "ops":
        return figures.ops_figure(figures.ops_table(result.graph))
    sweep = cached_size_sweep(config.cell, config.num_layers)
    return figures.size_figure(sweep, config, result.graph.stats["nodes"])


@st.cache_data(max_entries=48, show_spinner=False, hash_funcs=CONFIGS)
def cached_size_sweep(cell: str, num_layers: int) -> list[dict[str, int]]:
    return size_sweep(RunConfig(cell=cell, num_layers=num_layers))


@held(max_entries=32)
def cached_inspection(config: RunConfig, weight_scale: float, nonlinearity: str) -> inspection.Inspection:
    """Shared by all sessions (the node inspector needs the live graph): read it, never modify it.

    32 entries, about 0.8 MB each: a rerun reads its inspection up to four times
    (figures, prints), so sessions moving at once must not evict it in between.
    """
    return inspection.inspect_run(config, weight_scale, nonlinearity)


@st.cache_resource(max_entries=64, show_spinner=False, hash_funcs=CONFIGS)
def _dataset(key: tuple, _config: TrainConfig, _upload: data.Upload | None) -> tuple[data.Dataset, str]:
    return data.load_dataset(_config, _upload)


def cached_dataset(config: TrainConfig, upload: data.Upload | None) -> tuple[data.Dataset, str]:
    """``data.load_dataset``, once per data set (``data.dataset_key``) for every session.

    Read it, never modify it: loading and windowing the bundled prices is dear under load.
    A DataError is raised again on every call (errors are not cached).
    """
    return _dataset(data.dataset_key(config, upload), config, upload)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CONFIGS)
def _prices_figure(key: tuple, _dataset: data.Dataset) -> go.Figure:
    return figures.prices_figure(_dataset, "The data, split by time", height=300)


def cached_prices_figure(config: TrainConfig, upload: data.Upload | None, dataset: data.Dataset) -> go.Figure:
    """The Train page's price chart, built once per data set (``data.dataset_key``). Never modify it.

    Its shaded validation and test spans (plotly's ``add_vrect``) are slow to build.
    """
    return _prices_figure(data.dataset_key(config, upload), dataset)


@st.cache_resource(max_entries=32, show_spinner=False, hash_funcs=CONFIGS)
def cached_debug_figure(kind: str, config: RunConfig, weight_scale: float, nonlinearity: str) -> go.Figure:
    """The Debugging page's figures ("hidden" heatmap, "gradient" norms), built once per run.

    Built through plotly's checked API, they are slow to build. Shared by all sessions:
    never modify it.
    """
    run = cached_inspection(config, weight_scale, nonlinearity)
    return figures.hidden_heatmap(run) if kind == "hidden" else figures.gradient_figure(run)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=CONFIGS)
def cached_prints(config: RunConfig, weight_scale: float, nonlinearity: str, step: int) -> str:
    """What the print hook shows at ``step`` (a forward pass: worth keeping across reruns).

    At the default step the inspection printed it already, in its own forward pass.
    """
    run = cached_inspection(config, weight_scale, nonlinearity)
    if step == PRINT_STEP.default:
        return run.prints
    return inspection.captured_prints(run.model, run.inputs, step)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_prices_table(raw: bytes, min_rows: int) -> pd.DataFrame:
    """An uploaded file's table, on its bytes: a 5 MB file takes ~0.6 s to parse."""
    return data.read_prices_csv(raw, min_rows=min_rows)


EXPORTS = {"static": static.export_static, "dynamic": static.export_dynamic_seq_len,
           "early_stop": static.export_early_stop, "cond": static.export_cond_stop}


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=CONFIGS)
def cached_export(kind: str, config: RunConfig) -> static.ExportOutcome:
    """``kind``: one of EXPORTS' keys."""
    return EXPORTS[kind](config)


@held(max_entries=64)
def cached_early_stop_runs(config: RunConfig) -> tuple[tuple[static.EagerRun, Picture], ...]:
    """Both eager runs of the early-stop model, each laid out for the graph view.

    Shared by all sessions: read them, never modify them (a copy per rerun, as
    st.cache_data gives, and a fresh layout per rerun, cost each slider move).
    """
    return tuple((run, picture_of_graph(run.graph)) for run in static.early_stop_eager(config))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_answer(step: Step) -> Answer:
    """A lesson step's live answer: the step is frozen (its own key), so the answer is the same for
    all; its words are Messages (``Answer.said``)."""
    return step.live_answer()


@held(max_entries=32)
def cached_experiment(name: str, config: lab.LabConfig
                      ) -> tuple[lab_figures.Report, tuple[Picture, ...], pa.Table | None]:
    """A Lab experiment -> the report, its graphs laid out and its table as Arrow, each made once.

    Shared by all sessions: read them, never change them.
    """
    report = lab_figures.report(lab.EXPERIMENTS[name][1](config))
    table = None if report.table is None else pa.Table.from_pandas(report.table, preserve_index=False)
    return report, tuple(picture_of_graph(shown.graph) for shown in report.graphs), table


class _NotKept(Exception):
    """A run that says nothing of the code alone (the pool full or down, or stopped by the wall
    clock, which a busy box reaches first): returned, not cached."""

    def __init__(self, run: CodeRun) -> None:
        super().__init__(run.message)
        self.run = run


@held(max_entries=256)
def _code_run(source: str, *, who: str | None = None,
              on_wait: Callable[[int], None] | None = None) -> CodeRun:
    run = run_code(source, who=who, on_wait=on_wait)
    if run.status in ("refused", "unavailable") or (run.error is not None and run.error.limit == "wall_s"):
        raise _NotKept(run)
    return run


def cached_code_run(source: str, who: str | None = None,
                    on_wait: Callable[[int], None] | None = None) -> CodeRun:
    """A learner's code, run once in the sandbox for every session that runs the same text.

    A class runs the teacher's code once. The same text gives the same graph: a script
    that draws random numbers without a seed shows its first run's. Shared: never modify it.
    ``who``, ``on_wait``: the session, for the sandbox's fair queue, and what to tell it
    while its run waits for a place (``sandbox.run_code``).
    """
    try:
        return _code_run(source, who=who, on_wait=on_wait)
    except _NotKept as refused:
        return refused.run


@held(max_entries=256)
def cached_code_picture(source: str, unroll: frozenset[str] = frozenset(),
                        frame: int = -1) -> tuple[Picture, Trace | None]:
    """A run's graph laid out by its code, and its replay (None for a graph without one).

    ``frame``: which of the run's graphs (``CodeRun.film``, -1 the last); the graph of
    predictions has a replay, the graphs its backward() calls freed have none.
    """
    lines = source.splitlines(True)
    return drawing_of_record(cached_code_run(source).film[frame], unroll=unroll,
                             getlines=lambda f: lines if f == CODE_FILE else [])
