"""Controls bound to the URL: one widget per knob, the link's values checked, presets, share links."""

from __future__ import annotations

import hashlib
from urllib.parse import urlencode, urlsplit

import streamlit as st

from stockdemo import data, inspection
from stockdemo.config import (
    BATCH_SIZE,
    CELL,
    COMPARE,
    COMPARE_PRESETS,
    END_YEAR,
    EPOCHS,
    FEATURES,
    HIDDEN_SIZE,
    INPUT_SIZE,
    LAB_GRAPH,
    LEARNING_RATE,
    NODE,
    NONLINEARITY,
    NUM_LAYERS,
    PAGE_KNOBS,
    PANEL,
    PANEL_LABELS,
    PATIENCE,
    PRESENT,
    PRESETS,
    RUN_KNOBS,
    SEED,
    SEQ_LEN,
    SOURCE,
    START_YEAR,
    STEP,
    SYNTH,
    TARGET,
    TEST_PCT,
    TICKER,
    VAL_PCT,
    VIEW,
    WEIGHT_SCALE,
    ChoiceKnob,
    IntKnob,
    Preset,
    RunConfig,
    TrainConfig,
    url_value,
)
from stockdemo.graph import Graph
from stockdemo.ui import class_session
from stockdemo.ui.caches import cached_prices_table
from stockdemo.ui.frame import page_link, page_url, presenting
from stockdemo.ui.stage import set_comparison, stage_values


def knob_widget(knob: IntKnob | ChoiceKnob, bound: bool = True):
    """One control for one knob, bound to the URL under the knob's name.

    ``bound=False``: the page keeps the URL itself (``seldom_row``); the value
    outlives the widget while the learner stays on the page.
    """
    url = {"bind": "query-params"} if bound else {"persist_state": "page"}
    # Class mode: a teacher's value goes to the class; a following student's move snaps back.
    url.update(on_change=class_session.knob_moved, args=(knob.name,))
    if isinstance(knob, ChoiceKnob):
        value = st.selectbox(knob.label, knob.choices, index=knob.choices.index(knob.default),
                             key=knob.name, help=knob.help, format_func=knob.show, **url)
    elif not number_box(knob):
        value = st.slider(knob.label, knob.low, knob.high, value=knob.default, step=knob.step,
                          key=knob.name, help=knob.help, **url)
    else:
        # A float box shown as an integer: Streamlit's int number box raises on
        # ?seed=inf ("cannot convert float infinity to integer"); a float box
        # drops a non-finite URL value. Integers up to 2**53 are exact as floats.
        # "%.0f", not "%d": "%d" on a float box logs a warning, with a stack
        # trace, on every rerun.
        value = int(st.number_input(knob.label, float(knob.low), float(knob.high),
                                    value=float(knob.default), step=float(knob.step), format="%.0f",
                                    key=knob.name, help=knob.help, **url))
    class_session.knob_drawn(knob, value)
    return value


def knob_row(*knobs: IntKnob | ChoiceKnob, bound: bool = True) -> dict[str, object]:
    """A row of controls, bound to the URL unless ``bound=False`` -> {knob name: value}.

    A row container, not st.columns: one block instead of one per column, and
    every block is a message the server sends again on each rerun.
    """
    with st.container(horizontal=True, gap="medium"):
        return {knob.name: knob_widget(knob, bound) for knob in knobs}


def seldom_row(label: str, key: str, *knobs: IntKnob | ChoiceKnob) -> dict[str, object]:
    """Settings a learner seldom changes, in an expander that draws them only while open.

    -> {knob name: value}, open or closed. Every widget is re-sent on every
    rerun: the Playground's four, in the expander, took 3.8 ms of a 22 ms
    slider move (server CPU, one session moving between two cached settings).
    Closed, a value comes from the session: the link's (``url_messages``) or
    the widget's last (kept by ``persist_state``). Streamlit drops a bound
    widget's URL value when the widget stops being drawn, so these widgets
    are not bound: the URL is written here, open or closed.
    """
    with st.expander(label, key=key, on_change="rerun") as more:
        if more.open:
            values = knob_row(*knobs, bound=False)
        else:
            values = {knob.name: _held(knob) for knob in knobs}
    for knob in knobs:
        in_url = None if values[knob.name] == knob.default else url_value(knob.name, values[knob.name])
        if st.query_params.get(knob.name) != in_url:
            if in_url is None:
                st.query_params.pop(knob.name, None)
            else:
                st.query_params[knob.name] = in_url
    return values


def _held(knob: IntKnob | ChoiceKnob) -> object:
    """A knob's value while its widget is not drawn: the session's, else the default."""
    value = st.session_state.get(knob.name, knob.default)
    return int(value) if number_box(knob) else value


def number_box(knob: IntKnob | ChoiceKnob) -> bool:
    """Wide integer ranges get a number box; the rest a slider or a select box."""
    return isinstance(knob, IntKnob) and knob.high - knob.low > 300


def url_messages(page: str) -> None:
    """Validate the URL's values for ``page`` (its file) once per session, before its widgets read them.

    Streamlit silently drops a bound query value it cannot use; we clamp it
    instead (``?seq_len=999`` becomes 200) and say so on the page.
    """
    # The open tab, the node, the Lab's graph and the pinned run A are read by their own
    # code: Streamlit's tabs and segmented control by title, the node against the run's
    # graph (node_from_url), run A by the stage (ui.stage.compare_config).
    knobs = [k for k in PAGE_KNOBS[page] if k not in (PANEL, NODE, LAB_GRAPH, COMPARE)]
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
                st.session_state[knob.name] = float(value) if number_box(knob) else value
                if message:
                    messages.append(message)
                if len(raw[knob.name]) > 1:
                    messages.append(f"{knob.label}: the link repeats this setting; "
                                    f"the last value was used.")
        st.session_state[done_key] = messages
    for message in messages:
        st.warning(message, icon=":material/link_off:")


MORE_KNOBS = (BATCH_SIZE, INPUT_SIZE, SEED, VIEW)  # the Playground's seldom-changed settings


def run_controls() -> tuple[RunConfig, str]:
    """The Playground's settings -> (RunConfig, graph view). Every one is in the URL.

    Draws nothing: T, hidden size, layers and cell are drawn on the stage by the
    graph view (``stockdemo.ui.stage``), the rest by ``more_settings`` further
    down the page, which keeps their values in the session between runs.
    """
    url_messages("pages/playground.py")
    model = stage_values()
    more = {knob.name: _held(knob) for knob in MORE_KNOBS}
    view = more.pop(VIEW.name)
    return RunConfig(**model, **more), view


def more_settings() -> None:
    """The Playground's seldom-changed settings, in an expander under the stage."""
    seldom_row("More settings: batch, features, seed, graph view", "playground_more", *MORE_KNOBS)


def train_controls() -> tuple[TrainConfig, data.Upload | None]:
    """The Train page's controls -> (TrainConfig, the uploaded file read, or None).

    Every control is in the URL but the file. A bad file raises DataError.
    """
    url_messages("pages/train.py")
    source_col, where_col = st.columns([2, 5])
    with source_col:
        source = knob_widget(SOURCE)
    file, where = None, {}
    with where_col:
        if source == "stocks":
            where = knob_row(TICKER, START_YEAR, END_YEAR)
        elif source == "synthetic":
            where = {SYNTH.name: knob_widget(SYNTH)}
        else:
            file = st.file_uploader(
                f"Price history as CSV (up to {data.MAX_UPLOAD_BYTES // 2**20} MB)",
                type=["csv", "txt"], key="upload_csv",
                help="A Date column and a price column are enough; an exported "
                     "Date,Open,High,Low,Close,Adj Close,Volume file works as it is.")
    model = {**knob_row(FEATURES, TARGET, CELL), **knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS)}
    training = seldom_row("Training settings: epochs, learning rate, early stopping, split, seed",
                          "train_more", EPOCHS, LEARNING_RATE, PATIENCE, VAL_PCT, TEST_PCT, SEED)
    config, notes = TrainConfig.checked(source=source, **where, **model, **training)
    for note in notes:
        st.caption(note)
    if file is None:
        return config, None
    raw = file.getvalue()
    table = cached_prices_table(raw, data.min_rows(config.seq_len))
    candidates = data.price_columns(table)
    column = candidates[0]
    if len(candidates) > 1:
        with where_col:
            column = st.selectbox("Price column", candidates, key="upload_price",
                                  help="Several columns hold numbers: which is the price?")
    return config, data.Upload(table, file.name, column, hashlib.sha256(raw).hexdigest())


def debug_controls() -> tuple[RunConfig, int, str]:
    """Debugging's controls -> (config, recurrent weight scale in %, nonlinearity). All in the URL."""
    url_messages("pages/debugging.py")
    model = knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)
    debug = knob_row(WEIGHT_SCALE, NONLINEARITY)
    more = seldom_row("More settings: batch, features, seed", "debugging_more",
                      BATCH_SIZE, INPUT_SIZE, SEED)
    return RunConfig(**model, **more), int(debug[WEIGHT_SCALE.name]), debug[NONLINEARITY.name]


def lesson_step() -> int:
    """The lesson step on screen, kept in the URL (``?step=3``) so a link or a reload opens it.

    Back from an experiment through the menu (no ``?step``), the class resumes where it left.
    """
    raw = st.query_params.get_all(STEP.name) or st.session_state.get("lesson_step")
    number, message = STEP.parse(raw)
    if message:
        st.warning(message, icon=":material/link_off:")
    if st.query_params.get(STEP.name) != str(number):
        st.query_params[STEP.name] = str(number)
    st.session_state["lesson_step"] = number
    return number


def go_to_step(number: int) -> None:
    st.query_params[STEP.name] = str(number)


def static_controls() -> tuple[RunConfig, bool, bool]:
    """Static vs dynamic's controls -> (config, captures on?, Capture pressed in this run?)."""
    url_messages("pages/static_vs_dynamic.py")
    picked = knob_row(SEQ_LEN, CELL)
    config = RunConfig(seq_len=int(picked[SEQ_LEN.name]), cell=picked[CELL.name])
    pressed = st.button("Capture static graphs", key="static_capture", type="primary",
                        icon=":material/play_arrow:",
                        help="Runs torch.compile and torch.export on this model, then on every new T "
                             "you move to. Pressed again: a fresh torch.compile, the count from 0.")
    if pressed:
        st.session_state["static_on"] = True
    return config, st.session_state.get("static_on", False), pressed


def presets_bar() -> None:
    """One click to a classroom starting point (same page: set the controls).

    A row that wraps, each as wide as its label: in five equal columns the last
    preset's link ("Exploding gradients") was cut off at 1,400 px.
    """
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for preset in PRESETS:
            if preset.page == "pages/playground.py":
                st.button(preset.label, key=f"preset_{preset.key}", help=preset.lesson,
                          on_click=_apply_preset, args=(preset,))
            else:
                page_link(preset.page, preset.label, ":material/open_in_new:", query=preset.params)


def compare_bar() -> None:
    """One click to a comparison: run A pinned, the stage moved to run B, both drawn."""
    st.caption("Pin the run on screen as A with the graph's **Pin as A** button, then change "
               "the settings: A and B are drawn one above the other, what B added and lost "
               "coloured. Or start from one of these:")
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for key, label, a_params, b_params in COMPARE_PRESETS:
            st.button(label, key=f"compare_{key}", on_click=set_comparison, args=(a_params, b_params))


def graph_picker(labels: list[str]) -> int:
    """The Lab's "Show the graph" picker over an experiment's graphs -> the index picked.

    Bound to the link as ``lab_graph``, by label; drawn when there is a choice. A
    name the open experiment does not have (a tampered link, or one left from
    another experiment's tab) picks its first graph and is dropped from the link. (An
    experiment with one graph leaves the link alone: Streamlit refuses to delete a
    parameter a widget was bound to, even in an earlier run.)
    """
    if len(labels) < 2:
        return 0
    if st.session_state.get(LAB_GRAPH.name) not in (None, *labels):
        # Streamlit would reset the widget itself but keep the old name in the link.
        st.session_state[LAB_GRAPH.name] = labels[0]
    picked = st.segmented_control(LAB_GRAPH.label, labels, default=labels[0], required=True,
                                  key=LAB_GRAPH.name, bind="query-params", help=LAB_GRAPH.help)
    return labels.index(picked) if picked in labels else 0


_PANEL_SHOWN = "_panel_shown"  # the panel the picker last showed, by label


def panel_picker() -> str:
    """The Playground's panels under the stage -> the key of the one open (``PANEL_LABELS``).

    Bound to the link as ``panel``, by label, like the Lab's graph picker. A segmented
    control, not ``st.tabs``: Streamlit's page in the browser redraws every element at each
    run of any part of the page, and its tabs were the dearest element there: each step of
    the stage drew its graph ~20 ms later with tabs than with this control (bench_stage's
    keyboard step, interleaved runs: median 73-84 ms -> 55-61 ms).
    """
    labels = list(PANEL_LABELS.values())
    in_link = st.query_params.get(PANEL.name)
    if in_link in labels and in_link != st.session_state.get(_PANEL_SHOWN, in_link):
        st.session_state[PANEL.name] = in_link  # a link followed later in the session names one
    if st.session_state.get(PANEL.name) not in (None, *labels):
        st.session_state[PANEL.name] = labels[0]  # a tampered link: the first panel
    picked = st.segmented_control(PANEL.label, labels, default=labels[0], required=True, key=PANEL.name,
                                  bind="query-params", label_visibility="collapsed")
    st.session_state[_PANEL_SHOWN] = picked
    return next((key for key, label in PANEL_LABELS.items() if label == picked), PANEL.default)


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
        params = {**params, PRESENT.name: "1"}
    params = {k: url_value(k, v) for k, v in params.items()}
    return url + ("?" + urlencode(params) if params else "")


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
    value = st.slider(knob.label, knob.low, high, value=min(knob.default, high), step=knob.step,
                      key=knob.name, help=knob.help, bind="query-params",
                      on_change=class_session.knob_moved, args=(knob.name,))
    class_session.knob_drawn(knob, value)
    return value


def node_from_url(graph: Graph, default: str) -> None:
    """The Debugging page's node picker state, before the picker is drawn.

    A node named in the link, by id (``?node=L0.t2/Tanh0``) or by the label
    Streamlit itself writes there, is used once per session; any other value
    gets a message and the default node. A node that a new run no longer has
    (T made shorter) falls back to the default too.
    """
    done_key = "_url_checked:debugging_node"
    if done_key not in st.session_state:
        message = None
        raw, message = NODE.parse(st.query_params.get_all(NODE.name) or None)
        if raw:
            node_id, message = inspection.resolve_node(graph, raw)
            if node_id is not None:
                st.session_state[NODE.name] = node_id
        st.session_state[done_key] = message
    if st.session_state[done_key]:
        st.warning(st.session_state[done_key], icon=":material/link_off:")
    if st.session_state.get(NODE.name) not in graph.by_id:
        st.session_state[NODE.name] = default
