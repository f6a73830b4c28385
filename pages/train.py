"""Train and predict: train a fresh model on real prices, live, and compare it with naive baselines."""

import hashlib
import math
from contextlib import closing

import numpy as np
import streamlit as st

from stockdemo import data, train, ui, workers
from stockdemo.config import (
    CELL,
    END_YEAR,
    EPOCHS,
    FEATURES,
    HIDDEN_SIZE,
    LEARNING_RATE,
    MAX_TRAIN_SECONDS,
    NUM_LAYERS,
    SEED,
    SEQ_LEN,
    SOURCE,
    START_YEAR,
    SYNTH,
    TARGET,
    TEST_PCT,
    TICKER,
    TRAIN_BATCH_SIZE,
    TRAIN_KNOBS,
    TRAIN_LABELS,
    VAL_PCT,
    TrainConfig,
)
from stockdemo.render import render_dot

ui.setup_page(
    "Train and predict", ":material/show_chart:",
    "Press **Train** and watch both losses fall, then read the table: does the model beat the "
    "naive forecast *tomorrow's price = today's*?",
    __file__,
)
ui.url_messages("train", TRAIN_KNOBS)

source_col, where_col = st.columns([2, 5])
with source_col:
    source = ui.knob_widget(SOURCE)
with where_col:
    if source == "stocks":
        w1, w2, w3 = st.columns(3)
        with w1:
            ticker = ui.knob_widget(TICKER)
        with w2:
            start_year = ui.knob_widget(START_YEAR)
        with w3:
            end_year = ui.knob_widget(END_YEAR)
    elif source == "synthetic":
        series = ui.knob_widget(SYNTH)
    else:
        upload = st.file_uploader(f"Price history as CSV (up to {data.MAX_UPLOAD_BYTES // 2**20} MB)",
                                  type=["csv", "txt"], key="upload_csv",
                                  help="A Date column and a price column are enough; an exported "
                                       "Date,Open,High,Low,Close,Adj Close,Volume file works as it is.")

model = {**ui.knob_row(FEATURES, TARGET, CELL), **ui.knob_row(SEQ_LEN, HIDDEN_SIZE, NUM_LAYERS)}
with st.expander("Training settings: epochs, learning rate, split, seed"):
    training = ui.knob_row(EPOCHS, LEARNING_RATE, VAL_PCT, TEST_PCT, SEED)

if source == "stocks" and start_year > end_year:
    start_year, end_year = end_year, start_year
    st.caption("*From year* was after *To year*: using the two the other way round.")

config = TrainConfig(
    source=source, ticker=ticker if source == "stocks" else TICKER.default,
    series=series if source == "synthetic" else SYNTH.default,
    start_year=int(start_year) if source == "stocks" else START_YEAR.default,
    end_year=int(end_year) if source == "stocks" else END_YEAR.default,
    **model, **training,
)

# Load and window the data. Any problem with it is a message, never a crash.
try:
    if source == "stocks":
        prices = data.load_stock(config.ticker, config.start_year, config.end_year)
        data_key = (source, config.ticker, config.start_year, config.end_year)
        data_name = f"{config.ticker.upper()} daily close, {config.start_year}-{config.end_year}"
    elif source == "synthetic":
        prices = data.synthetic_prices(config.series, config.seed)
        data_key = (source, config.series, config.seed)
        data_name = f"{TRAIN_LABELS[config.series]}, seed {config.seed}"
    else:
        if upload is None:
            st.info("Upload a CSV with a date column and a price column, for example:\n\n"
                    "```\nDate,Close\n2013-02-26,441.40\n2013-02-27,444.57\n```",
                    icon=":material/upload_file:")
            st.stop()
        raw = upload.getvalue()
        # Cached on the file's bytes: a 5 MB file takes ~0.6 s to parse, and every widget reruns the page.
        table = st.cache_data(max_entries=8, show_spinner=False)(data.read_prices_csv)(
            raw, min_rows=data.min_rows(config.seq_len))
        candidates = data.price_columns(table)
        with where_col:
            price_column = candidates[0]
            if len(candidates) > 1:
                price_column = st.selectbox("Price column", candidates, key="upload_price",
                                            help="Several columns hold numbers: which is the price?")
        volume = data.volume_column(table)
        prices = data.prices_from_table(table, price_column, volume if volume != price_column else None)
        data_key = (source, hashlib.sha256(raw).hexdigest(), price_column)
        data_name = f"{upload.name}, column {price_column}"
    dataset = data.prepare(prices, config.feature_names, config.target, config.seq_len,
                           config.val_pct, config.test_pct)
except data.DataError as err:
    st.error(f"**This data cannot be used.** {err}", icon=":material/error:")
    st.stop()

first_day, last_day = np.datetime_as_string(dataset.dates[[0, -1]], unit="D")
st.markdown(
    f"**{data_name}**: {len(dataset.dates):,} trading days from {first_day} to {last_day}, "
    f"cut into {len(dataset.y):,} windows: **{dataset.n_train:,}** to train, **{dataset.n_val:,}** "
    f"to validate (early stopping), **{dataset.n_test:,}** held out to test. "
    + train.describe(config, dataset)
    + " Scaling is fitted on the training days only; the split follows time and is never shuffled "
      "across it."
)
if source == "stocks":
    st.caption(ui.DATA_CREDIT)

refusal = train.too_big(dataset, config)
if refusal:
    st.error(refusal, icon=":material/hourglass_disabled:")
b1, b2, b3 = st.columns([1, 1, 6], vertical_alignment="center")
start = b1.button("Train", key="train_go", type="primary", icon=":material/play_arrow:",
                  disabled=refusal is not None)
stop = b2.button("Stop", key="train_stop", icon=":material/stop:",
                 help="Stops training; the curves so far stay on the page.")
b3.caption(f"A fresh model every time, at most {EPOCHS.high} epochs and {MAX_TRAIN_SECONDS:.0f} s. "
           "Same settings and seed: same curves.")

run_key = (data_key, config)
pool = workers.shared_pool()  # started on this page's first visit, warm by the first press
# Stop reruns the page, which interrupts the training loop of the previous run.
if stop and st.session_state.pop("train_running", False):
    partial = st.session_state.pop("train_partial", [])
    when = f"after epoch {partial[-1].epoch}" if partial else "before the first epoch finished"
    st.warning(f"Training stopped {when}. Press **Train** to start again.",
               icon=":material/stop_circle:")
    if partial:
        st.plotly_chart(train.loss_figure(partial), width="stretch", key="loss_stopped")

if start:
    st.session_state.pop("train_result", None)
    st.session_state["train_running"] = True
    bar = st.progress(0.0, text="Starting: building a fresh model...")
    live_chart = st.empty()
    history: list[train.Progress] = []
    # In a worker process (off the server's GIL); closing the stream, also on Stop or a
    # closed tab, takes the run out of the queue or stops its worker.
    try:
        with closing(pool.train(dataset, config)) as events:
            for event in events:
                if isinstance(event, workers.Queued):
                    bar.progress(0.0, text=f"Waiting for a training worker: number {event.position} "
                                           f"in line ({event.workers} training at once on this server)")
                    continue
                if isinstance(event, train.TrainResult):
                    st.session_state["train_result"] = (run_key, event)
                    continue
                if event.val_loss is None:  # a report from inside a long epoch
                    status = (f"Epoch {event.epoch + 1}/{event.max_epochs} running · training loss "
                              f"so far {event.train_loss:.4f}")
                else:
                    history.append(event)
                    st.session_state["train_partial"] = list(history)
                    live_chart.plotly_chart(train.loss_figure(history), width="stretch",
                                            key=f"loss_live_{event.epoch}")
                    status = (f"Epoch {event.epoch}/{event.max_epochs} · training loss "
                              f"{event.train_loss:.4f} · validation loss {event.val_loss:.4f}")
                bar.progress(min(1.0, event.fraction), text=f"{status} · {event.elapsed:.1f} s")
    except (workers.TrainingRefused, workers.WorkerLost) as err:
        st.error(str(err), icon=":material/error:")
    bar.empty()
    live_chart.empty()
    st.session_state.pop("train_partial", None)
    st.session_state.pop("train_running", None)

stored = st.session_state.get("train_result")
result = stored[1] if stored and stored[0] == run_key else None
if result is None:
    if stored:
        st.caption("The settings changed since the last training: press **Train** to train on these.")
    st.plotly_chart(train.prices_figure(dataset, "The data, split by time"), width="stretch",
                    key="prices_chart")
else:
    metrics = result.metrics
    model_rmse = metrics.loc[train.MODEL_ROW, "RMSE"]
    st.subheader("How good is it? The held-out test days", anchor=False)
    kept = (f"the model kept is the one from epoch {result.best_epoch} (best validation loss)"
            if result.best_epoch else "no epoch finished, so the model is untrained")
    st.caption(f"Training {result.stop_reason}; {kept}. {result.seconds:.1f} s in all.")
    table_col, verdict_col = st.columns([3, 2])
    with table_col:
        shown = metrics.copy()
        shown["Direction"] = [("n/a: never calls a move" if math.isnan(d) else f"{d:.1%}")
                              for d in metrics["Direction"]]
        shown = shown.rename(columns={"RMSE": "RMSE (price)", "MAE": "MAE (price)",
                                      "Direction": "Direction right"})
        st.dataframe(shown, width="stretch", key="metrics_table",
                     column_config={"RMSE (price)": st.column_config.NumberColumn(format="%.3f"),
                                    "MAE (price)": st.column_config.NumberColumn(format="%.3f")})
        st.caption(f"All on {len(result.forecasts)} test days, as next-day close prices. "
                   "Direction: share of days the forecast called the up or down move right.")
    with verdict_col:
        winner = result.baseline_wins
        if winner:
            st.warning(
                f"**The baseline wins.** *{winner}* has a lower test RMSE "
                f"({metrics.loc[winner, 'RMSE']:.3f}) than the model ({model_rmse:.3f}). "
                "That is the usual result on daily prices: yesterday's close is a hard forecast "
                "to beat, and a model that seems to follow the price is mostly copying it.",
                icon=":material/balance:")
        else:
            st.success(
                f"**The model beats both baselines** on test RMSE ({model_rmse:.3f} against "
                f"{metrics.loc[train.PERSISTENCE_ROW, 'RMSE']:.3f} and "
                f"{metrics.loc[train.MA_ROW, 'RMSE']:.3f}). Before believing it, try other seeds, "
                "tickers and date ranges: one lucky split proves little.",
                icon=":material/check_circle:")
    st.plotly_chart(train.forecast_figure(dataset, result), width="stretch", key="forecast_chart")
    st.caption("Each forecast is made from the days before it only. A forecast that trails the "
               "actual line by one day is persistence in disguise. The chart opens on the test days: "
               "double-click it twice to see all of history.")
    st.plotly_chart(train.loss_figure(result.history), width="stretch", key="loss_chart")

    st.subheader("The graph of one training step", anchor=False)
    rendering = render_dot(result.step_graph, "auto")
    st.caption(f"{rendering.caption}. One batch of {TRAIN_BATCH_SIZE} windows runs forward "
               "and into the MSE loss: the same dynamic graph as in the Playground, now ending in "
               "a loss (the targets need no gradient, so they get no node). `loss.backward()` walks "
               "it in reverse to get every weight's gradient.")
    st.graphviz_chart(rendering.dot, width="stretch",
                      alt=f"Autograd graph of one training step: {result.step_graph.stats['nodes']} nodes")
    st.download_button("Download test forecasts CSV", result.forecasts.to_csv(),
                       file_name="test_forecasts.csv", mime="text/csv", icon=":material/download:")

st.info("**Not financial advice.** A teaching demo of how to test a forecast honestly, "
        "on old prices. Do not trade on it.", icon=":material/info:")
