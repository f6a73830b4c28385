"""Train and predict: train a fresh model on real prices, live, and compare it with naive baselines."""

import streamlit as st

from stockdemo import figures, ui
from stockdemo.config import TRAIN_BATCH_SIZE
from stockdemo.i18n import N_, tr
from stockdemo.layout.steps import layout
from stockdemo.train import prices as data
from stockdemo.train import report
from stockdemo.ui.graph_view import graph_view

ui.setup_page(
    N_("Train and predict"), ":material/show_chart:",
    N_("Press **Train** and watch the two losses part: the training loss falls as the model fits "
       "the days it trains on, the validation loss does not, because tomorrow's return is mostly "
       "noise. Then read the table: does the model beat the naive forecast *tomorrow's price = "
       "today's*?"),
    __file__,
)


# A fragment: moving a control reruns only this part. Training itself runs in a
# whole-page run after it, so that Stop can interrupt it, drawing into the panel
# the fragment returns.
@ui.fragment
def live() -> ui.TrainPanel | None:
    ui.leave_for_training()  # a press of Train: straight to the page run that trains
    try:
        config, upload = ui.train_controls()
        if config.source == "upload" and upload is None:
            st.info(tr("Upload a CSV with a date column and a price column, for example:") +
                    "\n\n```\nDate,Close\n2013-02-26,441.40\n2013-02-27,444.57\n```",
                    icon=":material/upload_file:")
            return None
        dataset, name = ui.cached_dataset(config, upload)
    except data.DataError as err:
        st.error(tr("**This data cannot be used.** {why}", why=err), icon=":material/error:")
        return None
    key = (config, upload and (upload.digest, upload.price_column))
    result, panel = ui.train_button(dataset, config, key,
                                    ui.cached_prices_figure(config, upload, dataset))
    st.markdown(report.describe_data(name, dataset, config))
    if config.source == "stocks":
        st.caption(tr(ui.DATA_CREDIT))
    if result is None:
        return panel

    st.subheader(tr("How good is it? The held-out test days"), anchor=False)
    st.caption(report.summary(result))
    table_col, verdict_col = st.columns([3, 2])
    price = st.column_config.NumberColumn(format="localized")
    table_col.dataframe(report.metrics_table(result.metrics), width="stretch", key="metrics_table",
                        column_config={str(report.METRIC_COLUMNS[c]): price for c in ("RMSE", "MAE")})
    table_col.caption(tr("All on {days} test days, as next-day close prices. Direction: share of days the "
                         "forecast called the up or down move right (persistence forecasts no move at all, "
                         "so it has none: n/a).", days=len(result.forecasts)))
    if result.baseline_wins:
        verdict_col.warning(report.verdict(result), icon=":material/balance:")
    else:
        verdict_col.success(report.verdict(result), icon=":material/check_circle:")
    st.plotly_chart(figures.forecast_figure(dataset, result), width="stretch", key="forecast_chart")
    st.caption(tr("{overlap} Each forecast is made from the days before it only. A forecast that trails "
                  "the actual line by one day is persistence in disguise. The chart opens on the test "
                  "days: double-click it twice to see all of history.", overlap=report.overlap_note(result)))

    st.subheader(tr("The graph of one training step"), anchor=False)
    picture = layout(result.step_graph, "auto", max_nodes=None)
    st.caption(tr("{caption}. One batch of {batch} windows runs forward and into the MSE loss: the same "
                  "dynamic graph as in the Playground, now ending in a loss (the targets need no "
                  "gradient, so they get no node). `loss.backward()` walks it in reverse to get every "
                  "weight's gradient.", caption=picture.caption, batch=TRAIN_BATCH_SIZE))
    trace = ui.replay_control(lambda: ui.training_trace(dataset, result), key="train_replay", in_url=False)
    graph_view(picture, trace, key="train_graph")
    st.download_button(tr("Download test forecasts CSV"), result.forecasts.to_csv,  # built on a click
                       file_name="test_forecasts.csv", mime="text/csv", icon=":material/download:",
                       on_click="ignore")
    return panel


ui.training_run(live())
st.info(tr("**Not financial advice.** A teaching demo of how to test a forecast honestly, "
           "on old prices. Do not trade on it."), icon=":material/info:")
