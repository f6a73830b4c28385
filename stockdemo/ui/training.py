"""The Train button and the training it starts: in a worker process, live, with Stop.

Training runs in a whole-page run, never in a fragment's: a click inside a fragment
waits for the fragment's run to end (Streamlit does not interrupt a run for it), so
Stop would only land after training. A Stop drawn outside the fragment reruns the page,
which interrupts the training loop at its next element.
"""

from __future__ import annotations

import time
from contextlib import closing
from typing import NamedTuple

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from stockdemo import figures
from stockdemo.config import EPOCHS, MAX_TRAIN_SECONDS, TrainConfig
from stockdemo.i18n import tr, trn, trp
from stockdemo.train import pool as workers
from stockdemo.train import report
from stockdemo.train import training as train
from stockdemo.train.prices import Dataset
from stockdemo.train.training import TrainResult
from stockdemo.ui import compat, keys

_JOB, _RESULT, _PARTIAL = keys.TRAIN_JOB, keys.TRAIN_RESULT, keys.TRAIN_PARTIAL
_STOPPED, _PRESSED = keys.TRAIN_STOPPED, keys.TRAIN_PRESSED
# While a run trains, its loss chart is redrawn when an epoch ends at least this long after the
# last redraw, and the progress bar as often: the curve moves at least 4 times a second as the
# learner watches. Only the runs that hold a worker redraw; the rest hear their place in line.
CHART_EVERY_S = 0.2
BAR_EVERY_S = 0.2
# The rerun that shows a training result drops every message this run queued and the
# server had not sent yet: under load, a short run lost its whole progress. Wait until
# they have gone out (a fixed pause did not help and lengthened every run).
SENT_WITHIN_S = 2.0
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
    curves and what they say (``report.story``); after Stop, the curves so far.
    """
    workers.shared_pool()  # started on the page's first visit, so warm by the first press
    refusal = train.too_big(dataset, config)
    if refusal:
        st.error(refusal, icon=":material/hourglass_disabled:")
    left, right = st.columns([1, 1], gap="large")
    with left:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.button(trp("button", "Train"), key="train_go", type="primary", icon=":material/play_arrow:",
                      disabled=refusal is not None or training_pending(), on_click=_press,
                      args=(key, dataset, config))
            stop = st.empty()
        st.caption(tr("A fresh model every time, at most {epochs} epochs and {seconds} s. Same settings and "
                      "seed: same curves.", epochs=EPOCHS.high, seconds=round(MAX_TRAIN_SECONDS)))
        status = st.container()
    panel = TrainPanel(stop, status, right.empty())
    partial = st.session_state.pop(_STOPPED, None)
    stored = st.session_state.get(_RESULT)
    result = stored[1] if stored and stored[0] == key else None
    if training_pending():  # training_run draws the rest, the live curve over the data at its first epoch
        panel.chart.plotly_chart(data_figure, width="stretch", key="prices_chart")
        return None, panel
    if partial is not None:
        status.warning(report.stopped_text(partial), icon=":material/stop_circle:")
        if partial:
            panel.chart.plotly_chart(figures.loss_figure(partial, PANEL_CHART_HEIGHT), width="stretch",
                                     key="loss_stopped")
            return None, panel
    elif result is not None:
        status.markdown(report.story(result))
        panel.chart.plotly_chart(figures.loss_figure(result.history, PANEL_CHART_HEIGHT), width="stretch",
                                 key="loss_chart")
        return result, panel
    elif stored:
        status.caption(tr("The settings changed since the last training: press **Train** to train on these."))
    panel.chart.plotly_chart(data_figure, width="stretch", key="prices_chart")
    return None, panel


def _press(key: tuple, dataset: Dataset, config: TrainConfig) -> None:
    st.session_state.pop(_RESULT, None)
    st.session_state[_JOB] = (key, dataset, config)
    st.session_state[_PRESSED] = True


def leave_for_training() -> None:
    """First thing in the Train page's fragment: after a press of Train, go straight to the
    whole-page run that trains, without drawing this fragment first (under many presses at
    once, the fragment drawn for nothing delays everyone's place in line).
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
    panel.stop.button(tr("Stop"), key="train_stop", icon=":material/stop:", on_click=_stop,
                      help=tr("Stops training; the curves so far stay on the page."))
    with panel.status:
        bar = st.progress(0.0, text=tr("Starting: building a fresh model..."))
    history: list[train.Progress] = []
    drawn_at = bar_at = 0.0
    # In a worker process, off the server's GIL. Closing the stream (the loop ends, Stop's
    # rerun interrupts it, the tab closes) takes the run out of the queue or stops its worker.
    try:
        with closing(workers.shared_pool().train(dataset, config)) as events:
            for event in events:
                if isinstance(event, workers.Queued):
                    waiting = trn("Waiting for a training worker: number {position} in line ({n} training "
                                  "at once here)", "Waiting for a training worker: number {position} in "
                                  "line ({n} training at once here)", event.workers, position=event.position)
                    bar.progress(0.0, text=waiting)
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
                                                  alt=trn("Line chart of the training and validation loss "
                                                          "per epoch, {n} epoch so far.", "Line chart of the "
                                                          "training and validation loss per epoch, {n} "
                                                          "epochs so far.", len(history)))
                        drawn_at = time.monotonic()
                if time.monotonic() - bar_at >= BAR_EVERY_S:  # the first report at once
                    bar.progress(min(1.0, event.fraction), text=report.progress_text(event))
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
    compat.wait_until_sent(SENT_WITHIN_S)
    st.rerun()
