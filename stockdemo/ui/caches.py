"""Results shared by every session, cached on the settings that made them.

``st.cache_resource`` for objects handed out as they are (read them, never
modify them); ``st.cache_data`` for values each caller gets a copy of.
``held`` for the large ones (runs, pictures, replays, learners' runs): handed
out as they are too, and bounded in bytes as well as in entries, because one
graph of 10,000 nodes costs as much as a thousand small ones. ``host.cache_budget()``
(a share of the host's memory; the operator's ``STOCKDEMO_CACHE_MB``) is what caching may
cost the server; the values themselves take at most half of it (``VALUES_SHARE``), plus
the one value just made.
"""

from __future__ import annotations

import functools
import sys
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable

import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa
import streamlit as st

from stockdemo import figures, heap, host, lab
from stockdemo import static_graphs as static
from stockdemo.config import PRINT_STEP, RunConfig, TrainConfig
from stockdemo.graph import Graph
from stockdemo.graph.diff import describe_diff, graph_diff
from stockdemo.graph.recorder import CODE_FILE
from stockdemo.lab import figures as lab_figures
from stockdemo.layout.picture import Picture
from stockdemo.layout.steps import layout
from stockdemo.lessons import Answer, Step
from stockdemo.live import inspection
from stockdemo.live.run import RunResult, run, size_sweep
from stockdemo.render.dot import Rendering, render_dot
from stockdemo.render.payload import static_payload
from stockdemo.replay.model import trace_run
from stockdemo.replay.trace import Trace
from stockdemo.sandbox import CodeRun, run_code
from stockdemo.train import prices as data

# (function, arguments) -> (value, its bytes), least recently used first; shared by every
# ``held`` cache, so the budget goes to whatever was used last, whichever page it serves.
_HELD: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
_HELD_LOCK = threading.Lock()
_HELD_COUNT: Counter[str] = Counter()
_MAKING: dict[tuple, threading.Lock] = {}  # one thread makes a value; the others wait for it
_LAST_SIZE: dict[str, int] = {}  # function -> its last value's bytes: the room made before its next
held_bytes = 0


# What holding large values costs the server beyond their own bytes, measured inside it after
# forty learners' programs of 8,684 nodes (docs/hosting.md, "Forty large programs from links"):
# for 28 MB of live values, 16 MB free inside Python's pools that those values and their making
# left part-used, and 8 MB more in glibc's arenas. So the values get half of the budget and
# the heap around them the other half, and the server grows by no more than the budget.
VALUES_SHARE = 0.5


def held_budget() -> int:
    """Bytes the ``held`` values and the payloads kept may take together."""
    return int(host.cache_budget() * VALUES_SHARE)


def held(max_entries: int) -> Callable:
    """Cache a function's value on its (hashable) arguments, for every session, bounded in bytes.

    Like ``st.cache_resource``: one value per arguments, shared (read it, never modify it),
    made once however many sessions ask at the same moment, an exception not cached.
    Keyword arguments are not part of the key (who asks, how to tell them they wait): they
    go to the call that makes the value.
    """
    def wrap(fn: Callable) -> Callable:
        name = fn.__qualname__

        @functools.wraps(fn)
        def cached(*args, **unkeyed):
            key = (name, *args)
            with _HELD_LOCK:
                hit = _held_hit(key)
                if hit is not None:
                    return hit[0]
                making = _MAKING.setdefault(key, threading.Lock())
            with making:
                with _HELD_LOCK:
                    hit = _held_hit(key)
                if hit is not None:
                    return hit[0]
                _make_room(name)
                try:
                    value = fn(*args, **unkeyed)
                    _keep(key, value, heap.size_of(value), max_entries)
                finally:
                    with _HELD_LOCK:
                        _MAKING.pop(key, None)
            return value

        return cached

    return wrap


def _held_hit(key: tuple) -> tuple[object, int] | None:
    hit = _HELD.get(key)
    if hit is not None:
        _HELD.move_to_end(key)
    return hit


def _make_room(name: str) -> None:
    """Drop the least recently used values until ``name``'s next value fits, if as large as its
    last: they are freed before it is made, so the heap does not hold both for a moment."""
    global held_bytes
    room = held_budget() - _static_bytes - _LAST_SIZE.get(name, 0)
    with _HELD_LOCK:
        while held_bytes > room and _HELD:
            old, (_, size) = _HELD.popitem(last=False)
            held_bytes -= size
            _HELD_COUNT[old[0]] -= 1


def _keep(key: tuple, value: object, size: int, max_entries: int) -> None:
    """Keep ``value``; drop the least recently used values until the budget holds (never ``value``)."""
    global held_bytes
    budget = held_budget() - _static_bytes  # the payloads' share is spent first
    with _HELD_LOCK:
        _LAST_SIZE[key[0]] = size
        if key in _HELD:
            return
        _HELD[key] = (value, size)
        held_bytes += size
        _HELD_COUNT[key[0]] += 1
        for old in list(_HELD):  # least recently used first
            over_budget, over_count = held_bytes > budget, _HELD_COUNT[key[0]] > max_entries
            if not (over_budget or over_count):
                break
            if old == key or (not over_budget and old[0] != key[0]):
                continue  # too many of one function's values: its own oldest goes
            held_bytes -= _HELD.pop(old)[1]
            _HELD_COUNT[old[0]] -= 1


def clear_held() -> None:
    """Forget every ``held`` value and every payload kept (tests that need cold caches)."""
    global held_bytes, _static_bytes
    with _HELD_LOCK:
        _HELD.clear()
        _HELD_COUNT.clear()
        _LAST_SIZE.clear()
        held_bytes = 0
    with _STATIC_LOCK:
        _STATIC.clear()
        _static_bytes = 0


# The parts of a payload that depend on the picture alone, kept for the last pictures
# drawn: a click on a node reruns the page, and a drag of T crosses dozens of pictures
# and comes back over them. Kept for as many pictures as the pages' picture caches hold
# (cached_picture: 48, and the Playground's T at its defaults, 199, kept for good),
# within a byte budget: a quarter of what ``held`` may keep, taken from it. Keyed by
# identity (pictures come from a shared cache), with a weak reference to the picture so a
# recycled id cannot match and a picture the caches dropped is not kept alive here; its
# entry, which can never match again, goes at the next payload made (its index of ids was
# the evicted graph's ids, 0.8 MB at 8,700 nodes).
_STATIC: OrderedDict[int, tuple[weakref.ref, tuple[str, dict[str, int]], int]] = OrderedDict()
_STATIC_LOCK = threading.Lock()
_STATIC_KEEP = 256
_STATIC_BYTES = held_budget() // 4
_static_bytes = 0


def cached_static_payload(picture: Picture) -> tuple[str, dict[str, int]]:
    """``render.payload.static_payload``, kept per picture: hand it to ``view_json(statics=)``."""
    global _static_bytes
    with _STATIC_LOCK:
        hit = _STATIC.get(id(picture))
        if hit is not None and hit[0]() is picture:
            _STATIC.move_to_end(id(picture))
            return hit[1]
    built = static_payload(picture)
    size = len(built[0]) + sys.getsizeof(built[1])  # the index's ids are the picture's own strings
    with _STATIC_LOCK:
        for gone in [key for key, (ref, _, _) in _STATIC.items() if ref() is None]:
            _static_bytes -= _STATIC.pop(gone)[2]
        old = _STATIC.pop(id(picture), None)
        if old is not None:
            _static_bytes -= old[2]
        _STATIC[id(picture)] = (weakref.ref(picture), built, size)
        _static_bytes += size
        while len(_STATIC) > _STATIC_KEEP or (_static_bytes > _STATIC_BYTES and len(_STATIC) > 1):
            _static_bytes -= _STATIC.popitem(last=False)[1][2]
    return built


def held_status() -> dict[str, int]:
    """For an operator: values held, their bytes, the budget (what caching may cost the
    server) and the part of it the values may take."""
    with _HELD_LOCK:
        return {"values": len(_HELD), "bytes": held_bytes, "budget": host.cache_budget(),
                "for_values": held_budget()}


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


@held(max_entries=48)
def _picture(config: RunConfig, view: str) -> Picture:
    return layout(cached_run(config).graph, view, max_nodes=None)


def kept(config: RunConfig, view: str) -> bool:
    """``config``'s run and its picture for ``view`` are kept for good (``keep_run``): free to read."""
    return (config, view) in _KEPT_PICTURES and config in _KEPT_RUNS


def keep_run(config: RunConfig, view: str) -> Picture:
    """Run ``config`` and lay it out for ``view`` once, and keep both for the life of the process."""
    result = _KEPT_RUNS.get(config) or run(config)
    picture = _KEPT_PICTURES.get((config, view)) or layout(result.graph, view, max_nodes=None)
    _KEPT_RUNS[config] = result
    _KEPT_PICTURES[(config, view)] = picture
    return picture


FIRST_RUN = "First run of this session: every node is new."


# (before, after) -> cached_change's answer, least recently used first. A plain dict: the
# diff itself is cheaper than a lookup in Streamlit's caches, which hash every argument.
_CHANGES: OrderedDict[tuple[RunConfig, RunConfig], tuple[str, int, tuple[str, ...]]] = OrderedDict()
_CHANGES_LOCK = threading.Lock()
CHANGES_KEPT = 512


def cached_change(before: RunConfig, after: RunConfig, before_graph: Graph, after_graph: Graph
                  ) -> tuple[str, int, tuple[str, ...]]:
    """From the run of ``before`` to the run of ``after``: (what changed in a sentence, the change
    in node count, the ids of the nodes added). Shared by every session moving between the same
    two settings (a class moving T together); the graphs are those settings' runs."""
    key = (before, after)
    with _CHANGES_LOCK:
        hit = _CHANGES.get(key)
        if hit is not None:
            _CHANGES.move_to_end(key)
            return hit
    diff = graph_diff(before_graph, after_graph)
    answer = (describe_diff(diff, before.__dict__, after.__dict__),
              after_graph.counts.nodes - before_graph.counts.nodes, tuple(n.id for n in diff.added_nodes))
    with _CHANGES_LOCK:
        _CHANGES[key] = answer
        while len(_CHANGES) > CHANGES_KEPT:
            _CHANGES.popitem(last=False)
    return answer


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
        change, delta, new = cached_change(previous["config"], config, previous["graph"], graph)
    return {"config": config, "graph": graph, "change": change, "delta": delta, "new": new}


@held(max_entries=16)
def cached_trace(config: RunConfig) -> Trace:
    """The run replayed with hooks (forward order, backward order and norms, source lines)."""
    return trace_run(config)


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
    return tuple((run, layout(run.graph, "auto", max_nodes=None)) for run in static.early_stop_eager(config))


@st.cache_data(max_entries=64, show_spinner=False)
def cached_answer(step: Step) -> Answer:
    """A lesson step's live answer: the step is frozen (its own key), so the answer is the same for all."""
    return step.reveal()


@held(max_entries=32)
def cached_experiment(name: str, config: lab.LabConfig
                      ) -> tuple[lab_figures.Report, tuple[Picture, ...], pa.Table | None]:
    """A Lab experiment -> the report, its graphs laid out and its table as Arrow, each made once.

    Shared by all sessions: read them, never change them.
    """
    report = lab_figures.report(lab.EXPERIMENTS[name][1](config))
    table = None if report.table is None else pa.Table.from_pandas(report.table, preserve_index=False)
    return report, tuple(layout(shown.graph, "auto", max_nodes=None) for shown in report.graphs), table


class _NotKept(Exception):
    """A run that says nothing of the code (the pool full or down): returned, not cached."""

    def __init__(self, run: CodeRun) -> None:
        super().__init__(run.message)
        self.run = run


@held(max_entries=256)
def _code_run(source: str, *, who: str | None = None,
              on_wait: Callable[[int], None] | None = None) -> CodeRun:
    run = run_code(source, who=who, on_wait=on_wait)
    if run.status in ("refused", "unavailable"):
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
    from stockdemo.code.view import drawing_of_record

    lines = source.splitlines(True)
    return drawing_of_record(cached_code_run(source).film[frame], unroll=unroll,
                             getlines=lambda f: lines if f == CODE_FILE else [])
