"""Each page's controls, read in one call: the Playground's, Train's, Debugging's, Static vs
dynamic's; presets and ready-made comparisons. Every control is in the URL."""

from __future__ import annotations

import hashlib

import streamlit as st

from stockdemo.config import (
    BATCH_SIZE,
    CELL,
    COMPARE_PRESETS,
    END_YEAR,
    EPOCHS,
    FEATURES,
    HIDDEN_SIZE,
    INPUT_SIZE,
    LEARNING_RATE,
    NONLINEARITY,
    NUM_LAYERS,
    PATIENCE,
    PRESETS,
    RUN_KNOBS,
    SEED,
    SEQ_LEN,
    SOURCE,
    START_YEAR,
    SYNTH,
    TARGET,
    TEST_PCT,
    TICKER,
    VAL_PCT,
    VIEW,
    WEIGHT_SCALE,
    Preset,
    RunConfig,
    TrainConfig,
)
from stockdemo.i18n import tr
from stockdemo.train import prices as data
from stockdemo.ui import hooks, keys
from stockdemo.ui.caches import cached_prices_table
from stockdemo.ui.compare import set_comparison
from stockdemo.ui.routes import page_link
from stockdemo.ui.stage import stage_values
from stockdemo.ui.stage_route import catch_up
from stockdemo.ui.url_sync import url_messages
from stockdemo.ui.widgets import held, knob_row, knob_widget, seldom_row

MORE_KNOBS = (BATCH_SIZE, INPUT_SIZE, SEED, VIEW)  # the Playground's seldom-changed settings


def run_controls() -> tuple[RunConfig, str]:
    """The Playground's settings -> (RunConfig, graph view). Every one is in the URL.

    Draws nothing: T, hidden size, layers and cell are drawn on the stage by the
    graph view (``stockdemo.ui.stage``), the rest by ``more_settings`` further
    down the page, which keeps their values in the session between runs.
    Listeners may set the settings first (``hooks.SETTINGS_WANTED``: a following
    student's are the teacher's) and hear them once read (``hooks.SETTINGS_READ``).
    """
    catch_up()  # moves served without a run (stage_route) are this session's now
    hooks.fire(hooks.SETTINGS_WANTED)
    url_messages("pages/playground.py")
    model = stage_values()
    more = {knob.name: held(knob) for knob in MORE_KNOBS}
    view = more.pop(VIEW.name)
    config = RunConfig(**model, **more)
    hooks.fire(hooks.SETTINGS_READ, config, view)
    return config, view


def more_settings() -> None:
    """The Playground's seldom-changed settings, in an expander under the stage."""
    seldom_row(tr("More settings: batch, features, seed, graph view"), "playground_more", *MORE_KNOBS)


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
                tr("Price history as CSV (up to {size} MB)", size=data.MAX_UPLOAD_BYTES // 2**20),
                type=["csv", "txt"], key="upload_csv",
                help=tr("A Date column and a price column are enough; an exported "
                        "Date,Open,High,Low,Close,Adj Close,Volume file works as it is."))
    model = {**knob_row(FEATURES, TARGET, CELL), **knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS)}
    training = seldom_row(tr("Training settings: epochs, learning rate, early stopping, split, seed"),
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
            column = st.selectbox(tr("Price column"), candidates, key="upload_price",
                                  help=tr("Several columns hold numbers: which is the price?"))
    return config, data.Upload(table, file.name, column, hashlib.sha256(raw).hexdigest())


def debug_controls() -> tuple[RunConfig, int, str]:
    """Debugging's controls -> (config, recurrent weight scale in %, nonlinearity). All in the URL."""
    url_messages("pages/debugging.py")
    model = knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS, CELL)
    debug = knob_row(WEIGHT_SCALE, NONLINEARITY)
    more = seldom_row(tr("More settings: batch, features, seed"), "debugging_more",
                      BATCH_SIZE, INPUT_SIZE, SEED)
    return RunConfig(**model, **more), int(debug[WEIGHT_SCALE.name]), debug[NONLINEARITY.name]


def static_controls() -> tuple[RunConfig, bool, bool]:
    """Static vs dynamic's controls -> (config, captures on?, Capture pressed in this run?)."""
    url_messages("pages/static_vs_dynamic.py")
    picked = knob_row(SEQ_LEN, CELL)
    config = RunConfig(seq_len=int(picked[SEQ_LEN.name]), cell=picked[CELL.name])
    pressed = st.button(tr("Capture static graphs"), key="static_capture", type="primary",
                        icon=":material/play_arrow:",
                        help=tr("Runs torch.compile and torch.export on this model, then on every new T "
                                "you move to. Pressed again: a fresh torch.compile, the count from 0."))
    if pressed:
        st.session_state[keys.STATIC_ON] = True
    return config, st.session_state.get(keys.STATIC_ON, False), pressed


def presets_bar() -> None:
    """One click to a classroom starting point (same page: set the controls).

    A row that wraps, each as wide as its label: in five equal columns the last
    preset's link ("Exploding gradients") was cut off at 1,400 px.
    """
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for preset in PRESETS:
            if preset.page == "pages/playground.py":
                st.button(tr(preset.label), key=f"preset_{preset.key}", help=tr(preset.lesson),
                          on_click=_apply_preset, args=(preset,))
            else:
                page_link(preset.page, tr(preset.label), ":material/open_in_new:", query=preset.params)


def compare_bar() -> None:
    """One click to a comparison: run A pinned, the stage moved to run B, both drawn."""
    st.caption(tr("Pin the run on screen as A with the graph's **Pin as A** button, then change "
                  "the settings: A and B are drawn one above the other, what B added and lost "
                  "coloured. Or start from one of these:"))
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        for key, label, a_params, b_params in COMPARE_PRESETS:
            st.button(tr(label), key=f"compare_{key}", on_click=set_comparison, args=(a_params, b_params))


def _apply_preset(preset: Preset) -> None:
    config, _ = RunConfig.from_params(preset.params)
    for knob in RUN_KNOBS:
        st.session_state[knob.name] = getattr(config, knob.name)
    st.session_state[VIEW.name] = VIEW.default
