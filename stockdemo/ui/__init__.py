"""The one module that imports Streamlit: page set-up, shared controls, cached runs.

Every page calls ``setup_page`` first, so a page works the same whether it is
reached from the sidebar, typed into a fresh tab, or run alone by AppTest.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import torch
from streamlit.errors import StreamlitPageNotFoundError

from stockdemo import figures
from stockdemo.config import (
    BATCH_SIZE,
    CELL,
    CHOICE_LABELS,
    HIDDEN_SIZE,
    INPUT_SIZE,
    NUM_LAYERS,
    PRESENT,
    PRESETS,
    RUN_KNOBS,
    SEED,
    SEQ_LEN,
    VIEW,
    ChoiceKnob,
    IntKnob,
    Preset,
    RunConfig,
    url_value,
)
from stockdemo.graph import Graph
from stockdemo.live import RunResult, run, size_sweep
from stockdemo.render import Rendering, render_dot

ROOT = Path(__file__).resolve().parents[2]

# (file relative to the app root, title, icon). A page shows in the menu once its file exists.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/home:"),
    ("pages/playground.py", "Playground", ":material/tune:"),
    ("pages/train.py", "Train and predict", ":material/show_chart:"),
    ("pages/static_vs_dynamic.py", "Static vs dynamic", ":material/compare_arrows:"),
    ("pages/debugging.py", "Debugging", ":material/bug_report:"),
    ("pages/lab.py", "Lab", ":material/science:"),
    ("pages/lesson.py", "Lesson", ":material/school:"),
)

DATA_CREDIT = (
    "Stock prices: Quandl WIKI Prices (public domain), as redistributed in "
    "bokeh-sampledata. Prices as supplied, without accuracy guarantee."
)

# Set deliberately for a server shared by many sessions: one torch thread per
# op gives steady run times under load on a 2-core box (measured: default
# 2 threads stalled some runs for 20-57 s with 30 sessions).
_THREADS = int(os.environ.get("STOCKDEMO_TORCH_THREADS", "1"))
if torch.get_num_threads() != _THREADS:
    torch.set_num_threads(_THREADS)
try:
    torch.set_num_interop_threads(_THREADS)
except RuntimeError:
    pass  # already set once in this process; it can only be set before first use


def setup_page(title: str, icon: str, intro: str, source: str) -> None:
    """Page config, sidebar menu and credits, title and the one-line intro.

    ``source`` is the page file (``__file__``), shown and linked in the sidebar.
    """
    present = presenting()
    # An emoji favicon: a Material icon here would be fetched from a font CDN,
    # which fails offline and logs a console error on every page.
    st.set_page_config(page_title=f"{title} · stockdemo", page_icon="📈", layout="wide",
                       initial_sidebar_state="collapsed" if present else "expanded")
    st.html(FOCUS_CSS)
    if present:
        st.html(PRESENTER_CSS)
    with st.sidebar:
        st.markdown("### stockdemo")
        st.caption("PyTorch's define-by-run graphs, live")
        st.toggle(PRESENT.label, key="present_toggle", value=present, help=PRESENT.help,
                  on_change=_set_presenting)
        for path, label, page_icon in PAGES:
            if (ROOT / path).exists():
                page_link(path, label, page_icon)
        st.divider()
        rel = Path(source).resolve().relative_to(ROOT).as_posix()
        base = os.environ.get("STOCKDEMO_SOURCE_URL", "").rstrip("/")
        if base:
            st.markdown(f"Code of this page: [`{rel}`]({base}/{rel})")
        else:
            st.markdown(f"Code of this page: `{rel}`")
        with st.expander("Show this page's code"):
            st.code(Path(source).read_text(encoding="utf-8"), language="python")
        st.caption(DATA_CREDIT)
        st.caption("A teaching demo, not financial advice.")
    st.title(f"{icon} {title}", anchor=False)
    if not present:
        st.markdown(intro)


# Keyboard users must see where they are. Streamlit shows a chart's toolbar
# (fullscreen, download) only on hover, not when one of its buttons has the
# focus, and marks a focused menu link only with the hover grey, which the
# current page's link already has.
FOCUS_CSS = """<style>
[data-testid="stElementToolbar"]:focus-within { opacity: 1; }
[data-testid="stPageLink-NavLink"]:focus-visible { outline: 2px solid #0072B2; outline-offset: 2px; }
</style>"""

PRESENTER_CSS = """<style>
html { font-size: 22px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 3.4rem 2rem 2rem 2rem; }
[data-testid="stMetricValue"] { font-size: 2.4rem; }
[data-testid="stMetricLabel"] p, [data-testid="stProgress"] p { font-size: 1rem; }
</style>"""


def presenting() -> bool:
    """Presenter mode: ``?present=1`` in the link, or the sidebar toggle."""
    if "present" not in st.session_state:
        value, _ = PRESENT.parse(st.query_params.get_all("present") or None)
        st.session_state["present"] = value == "1"
    return bool(st.session_state["present"])


def _set_presenting() -> None:
    on = bool(st.session_state["present_toggle"])
    st.session_state["present"] = on
    if on:
        st.query_params["present"] = "1"
    else:
        st.query_params.pop("present", None)


def presets_bar() -> None:
    """One click to a classroom starting point (same page: set the controls)."""
    cols = st.columns(len(PRESETS))
    for col, preset in zip(cols, PRESETS, strict=True):
        with col:
            if preset.page == "pages/playground.py":
                st.button(preset.label, key=f"preset_{preset.key}", help=preset.lesson,
                          on_click=_apply_preset, args=(preset,), width="stretch")
            else:
                page_link(preset.page, preset.label, ":material/open_in_new:", query=preset.params)


def _apply_preset(preset: Preset) -> None:
    config, _ = RunConfig.from_params(preset.params)
    for knob in RUN_KNOBS:
        st.session_state[knob.name] = getattr(config, knob.name)
    st.session_state[VIEW.name] = VIEW.default


def share_link(path: str, params: dict[str, str]) -> str:
    """The link that reproduces this run: the page's URL with its non-default settings."""
    url = page_url(path)
    try:
        parts = urlsplit(st.context.url)
        url = f"{parts.scheme}://{parts.netloc}{url}"
    except (AttributeError, ValueError, TypeError):
        pass  # no browser (AppTest): a path relative to the app
    if presenting():
        params = {**params, "present": "1"}
    params = {k: url_value(k, v) for k, v in params.items()}
    return url + ("?" + urlencode(params) if params else "")


def page_url(path: str) -> str:
    """The URL path of a page file: app.py is "/", pages/NAME.py is "/NAME"."""
    return "/" if path == "app.py" else "/" + Path(path).stem


def page_link(path: str, label: str, icon: str, query: dict[str, str] | None = None) -> None:
    """A link to another page; a plain link where the page registry is not the app's.

    (AppTest running one page file alone knows no other pages.)
    """
    query = None if query is None else {k: url_value(k, v) for k, v in query.items()}
    try:
        st.page_link(path, label=label, icon=icon, query_params=query)
    except StreamlitPageNotFoundError:
        url = page_url(path)
        if query:
            url += "?" + urlencode(query)
        st.markdown(f"[{label}]({url})")


def knob_widget(knob: IntKnob | ChoiceKnob):
    """One control for one knob, bound to the URL under the knob's name."""
    if isinstance(knob, ChoiceKnob):
        labels = CHOICE_LABELS.get(knob.name, {})
        return st.selectbox(knob.label, knob.choices, index=knob.choices.index(knob.default),
                            key=knob.name, help=knob.help, bind="query-params",
                            format_func=lambda c: labels.get(c, c))
    if not _number_box(knob):
        return st.slider(knob.label, knob.low, knob.high, value=knob.default, step=knob.step,
                         key=knob.name, help=knob.help, bind="query-params")
    # A float box shown as an integer: Streamlit's int number box raises on
    # ?seed=inf ("cannot convert float infinity to integer"); a float box
    # drops a non-finite URL value. Integers up to 2**53 are exact as floats.
    # "%.0f", not "%d": "%d" on a float box logs a warning, with a stack
    # trace, on every rerun.
    value = st.number_input(knob.label, float(knob.low), float(knob.high),
                            value=float(knob.default), step=float(knob.step), format="%.0f",
                            key=knob.name, help=knob.help, bind="query-params")
    return int(value)


def knob_row(*knobs: IntKnob | ChoiceKnob) -> dict[str, object]:
    """A row of URL-bound controls -> {knob name: value}.

    A row container, not st.columns: one block instead of one per column, and
    every block is a message the server sends again on each rerun.
    """
    with st.container(horizontal=True, gap="medium"):
        return {knob.name: knob_widget(knob) for knob in knobs}


def _number_box(knob: IntKnob | ChoiceKnob) -> bool:
    """Wide integer ranges get a number box; the rest a slider or a select box."""
    return isinstance(knob, IntKnob) and knob.high - knob.low > 300


def url_messages(page: str, knobs=(*RUN_KNOBS, VIEW)) -> None:
    """Validate the URL's values once per session, before the widgets read them.

    Streamlit silently drops a bound query value it cannot use; we clamp it
    instead (``?seq_len=999`` becomes 200) and say so on the page.
    """
    done_key = f"_url_checked:{page}"
    if done_key in st.session_state:
        messages = st.session_state[done_key]
    else:
        raw = {k.name: st.query_params.get_all(k.name) for k in knobs
               if k.name in st.query_params}
        messages = []
        for knob in knobs:
            if knob.name in raw:
                value, message = knob.parse(raw[knob.name])
                st.session_state[knob.name] = float(value) if _number_box(knob) else value
                if message:
                    messages.append(message)
                if len(raw[knob.name]) > 1:
                    messages.append(f"{knob.label}: the link repeats this setting; "
                                    f"the last value was used.")
        st.session_state[done_key] = messages
    for message in messages:
        st.warning(message, icon=":material/link_off:")


def run_controls() -> tuple[RunConfig, str]:
    """The Playground's controls -> (RunConfig, graph view). Every control is in the URL."""
    url_messages("playground")
    model = knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)
    with st.expander("More settings: batch, features, seed, graph view"):
        more = knob_row(BATCH_SIZE, INPUT_SIZE, SEED, VIEW)
    view = more.pop(VIEW.name)
    config = RunConfig(**model, **more)
    return config, view


# Sent together, the graph and a plotly chart redraw in one browser frame and
# the graph waits ~0.2 s for plotly. A pause before the chart lets the browser
# draw the graph first (bench/bench_browser.py, default config: slider to
# graph 0.49-0.53 s -> 0.36-0.39 s; the chart follows as before). Only when
# the server answered quickly: a slow rerun means a busy server, where the
# pause would only add to every learner's wait (bench/load.py).
GRAPH_FIRST_PAUSE_S = 0.1
PAUSE_ONLY_BELOW_S = 0.25


def chart_after_graph(fig: go.Figure, alt: str, rerun_started: float) -> None:
    """A full-width plotly chart, sent a moment after the graph above it.

    ``rerun_started``: ``time.perf_counter()`` when this rerun began.
    """
    if time.perf_counter() - rerun_started < PAUSE_ONLY_BELOW_S:
        time.sleep(GRAPH_FIRST_PAUSE_S)
    st.plotly_chart(fig, width="stretch", alt=alt)


@st.cache_resource(max_entries=48, show_spinner=False)
def cached_run(config: RunConfig) -> RunResult:
    """Shared by all sessions: read it, never train or modify it."""
    return run(config)


@st.cache_data(max_entries=96, show_spinner=False)
def cached_render(config: RunConfig, view: str) -> Rendering:
    return render_dot(cached_run(config).graph, view)


@st.cache_resource(max_entries=192, show_spinner=False)
def cached_figure(kind: str, config: RunConfig) -> go.Figure:
    """The Playground's plotly figures, built once per config (plotly's checks are slow).

    A resource, not data: unpickling a cached go.Figure re-validates it, which
    costs as much as building it. Shared by all sessions: never modify it.
    """
    result = cached_run(config)
    if kind == "predictions":
        return figures.predictions_figure(result)
    stats = result.graph.stats
    if kind == "ops":
        return figures.ops_figure(pd.DataFrame(list(stats["ops_by_type"].items()),
                                               columns=["op", "count"]))
    sweep = cached_size_sweep(config.cell, config.num_layers)
    return figures.size_figure(sweep, config, stats["nodes"])


@st.cache_data(max_entries=48, show_spinner=False)
def cached_size_sweep(cell: str, num_layers: int) -> list[dict[str, int]]:
    return size_sweep(RunConfig(cell=cell, num_layers=num_layers))


def capped_knob_widget(knob: IntKnob, high: int) -> int:
    """A knob's URL-bound slider whose top is set by the run (e.g. a step below T).

    A value left over from a longer run, or from the URL, is clamped first:
    a slider may not hold a value beyond its range.
    """
    high = max(knob.low, min(knob.high, high))
    if st.session_state.get(knob.name, knob.default) > high:
        st.session_state[knob.name] = high
    if high == knob.low:
        st.caption(f"{knob.label}: {knob.low} (the only step of this run)")
        return knob.low
    return st.slider(knob.label, knob.low, high, value=min(knob.default, high), step=knob.step,
                     key=knob.name, help=knob.help, bind="query-params")


def node_from_url(graph: Graph, default: str) -> None:
    """The Debugging page's node picker state, before the picker is drawn.

    A node named in the link, by id (``?node=L0.t2/Tanh0``) or by the label
    Streamlit itself writes there, is used once per session; any other value
    gets a message and the default node. A node that a new run no longer has
    (T made shorter) falls back to the default too.
    """
    from stockdemo import inspection

    done_key = "_url_checked:debugging_node"
    if done_key not in st.session_state:
        message = None
        raw = st.query_params.get_all("node")
        if raw:
            node_id, message = inspection.resolve_node(graph, raw[-1])
            if node_id is not None:
                st.session_state["node"] = node_id
        st.session_state[done_key] = message
    if st.session_state[done_key]:
        st.warning(st.session_state[done_key], icon=":material/link_off:")
    if st.session_state.get("node") not in graph.by_id:
        st.session_state["node"] = default


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_inspection(config: RunConfig, weight_scale: float, nonlinearity: str):
    """Shared by all sessions (the node inspector needs the live graph): read it, never modify it."""
    from stockdemo import inspection

    return inspection.inspect_run(config, weight_scale, nonlinearity)


@st.cache_data(max_entries=64, show_spinner=False)
def cached_prints(config: RunConfig, weight_scale: float, nonlinearity: str, step: int) -> str:
    """What the print hook shows at ``step`` (a forward pass: worth keeping across reruns)."""
    from stockdemo import inspection

    run = cached_inspection(config, weight_scale, nonlinearity)
    return inspection.captured_prints(run.model, run.inputs, step)
