"""Training: seeded, bounded, fresh model each time; baselines and metrics computed by hand."""

import dataclasses
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from stockdemo import figures
from stockdemo.config import EPOCHS, TrainConfig
from stockdemo.graph import OUTPUT_ID
from stockdemo.live.run import run
from stockdemo.train import prices as data
from stockdemo.train import report, windows
from stockdemo.train import training as train


def small_dataset(config: TrainConfig, days: int = 300) -> windows.Dataset:
    prices = data.synthetic_prices("gbm", 7, days=days)
    return windows.prepare(prices, config.feature_names, config.target, config.seq_len,
                        config.val_pct, config.test_pct)


def test_persistence_matches_a_hand_computation():
    close = np.array([10.0, 11.0, 9.0, 12.0])
    forecast = train.persistence_baseline(close)  # for days 1, 2, 3
    np.testing.assert_array_equal(forecast, [10.0, 11.0, 9.0])
    metrics = train.forecast_metrics(close[1:], forecast, previous=close[:-1])
    # errors: 10-11, 11-9, 9-12 = -1, 2, -3
    assert metrics["RMSE"] == pytest.approx(math.sqrt((1 + 4 + 9) / 3))
    assert metrics["MAE"] == pytest.approx(2.0)
    assert math.isnan(metrics["Direction"])  # persistence never calls a move


def test_moving_average_matches_a_hand_computation():
    close = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    np.testing.assert_allclose(train.moving_average_baseline(close, window=3), [2.0, 3.0, 4.0])


def test_directional_accuracy_counts_called_moves_on_days_that_moved():
    previous = np.array([10.0, 10.0, 10.0, 10.0])
    actual = np.array([11.0, 9.0, 10.0, 12.0])  # up, down, flat (not counted), up
    forecast = np.array([10.5, 10.5, 9.0, 9.5])  # up (right), up (wrong), -, down (wrong)
    assert train.forecast_metrics(actual, forecast, previous)["Direction"] == pytest.approx(1 / 3)


def test_same_seed_and_settings_give_identical_losses_and_predictions():
    config = TrainConfig(epochs=4, seed=3)
    ds = small_dataset(config)
    a, b = train.run_training(ds, config), train.run_training(ds, config)
    assert [(p.train_loss, p.val_loss) for p in a.history] == [(p.train_loss, p.val_loss) for p in b.history]
    np.testing.assert_array_equal(a.forecasts["model"], b.forecasts["model"])
    other = train.run_training(ds, TrainConfig(epochs=4, seed=4))
    assert other.history[0].train_loss != a.history[0].train_loss


def test_baselines_in_the_result_are_computed_from_the_test_days():
    config = TrainConfig(epochs=2)
    ds = small_dataset(config)
    f = train.run_training(ds, config).forecasts
    test = ds.part("test")
    np.testing.assert_array_equal(f["actual"], ds.next_close(test))
    np.testing.assert_array_equal(f["persistence"], ds.previous_close(test))
    np.testing.assert_array_equal(f["persistence"].to_numpy()[1:], f["actual"].to_numpy()[:-1])
    days = ds.target_day[test] + windows.WARMUP
    expected_ma = [ds.close[d - windows.MA_WINDOW:d].mean() for d in days]
    np.testing.assert_allclose(f["moving_average"], expected_ma)
    assert len(f) == ds.n_test


def test_result_metrics_have_the_model_and_both_baselines():
    config = TrainConfig(epochs=2)
    result = train.run_training(small_dataset(config), config)
    assert list(result.metrics.index) == [train.MODEL_ROW, train.PERSISTENCE_ROW, train.MA_ROW]
    assert (result.metrics["RMSE"] >= result.metrics["MAE"]).all()
    winner = result.baseline_wins
    model_rmse = result.metrics.loc[train.MODEL_ROW, "RMSE"]
    if winner is None:
        assert (result.metrics["RMSE"].drop(train.MODEL_ROW) > model_rmse).all()
    else:
        assert result.metrics.loc[winner, "RMSE"] <= model_rmse


def test_training_leaves_a_shared_model_untouched():
    config = TrainConfig(epochs=2)
    shared = run(config.model_config).model
    before = {k: v.clone() for k, v in shared.state_dict().items()}
    train.run_training(small_dataset(config), config)
    for name, value in shared.state_dict().items():
        assert torch.equal(value, before[name]), name


def test_epochs_are_bounded_and_progress_comes_every_epoch():
    config = TrainConfig(epochs=3, lr="0.0003")
    events = list(train.train(small_dataset(config), config))
    epochs = [e.epoch for e in events if isinstance(e, train.Progress) and e.val_loss is not None]
    assert epochs == [1, 2, 3]
    assert isinstance(events[-1], train.TrainResult)
    assert "maximum of 3 epochs" in events[-1].stop_reason.english()


def test_wall_time_limit_stops_training():
    config = TrainConfig(epochs=200)
    result = train.run_training(small_dataset(config), config, max_seconds=0.0)
    assert "time limit" in result.stop_reason.english()
    assert len(result.history) == 0 and len(result.forecasts) > 0


def test_early_stopping_keeps_the_best_validation_epoch():
    config = TrainConfig(epochs=200, lr="0.03", patience=8)
    result = train.run_training(small_dataset(config), config)
    val = [p.val_loss for p in result.history]
    assert result.best_epoch == int(np.argmin(val)) + 1
    if "early" in result.stop_reason.english():
        assert len(val) - result.best_epoch == config.patience


def test_without_patience_every_epoch_runs_and_the_best_is_kept():
    config = TrainConfig(epochs=12, lr="0.03")
    assert config.patience == 0  # the default: no early stopping
    result = train.run_training(small_dataset(config), config)
    val = [p.val_loss for p in result.history]
    assert len(val) == 12 and "maximum of 12 epochs" in result.stop_reason.english()
    assert result.best_epoch == int(np.argmin(val)) + 1


def test_step_graph_runs_from_prediction_through_the_loss():
    config = TrainConfig(epochs=1)
    graph = train.run_training(small_dataset(config), config).step_graph
    output = graph.by_id[OUTPUT_ID]
    assert output.label == "loss (MSE)" and output.shape == ()
    assert graph.stats["ops_by_type"]["MseLoss"] == 1
    assert graph.meta["seq_len"] == config.seq_len


def test_figures_put_dates_on_the_x_axis_and_shade_the_held_out_days():
    config = TrainConfig(epochs=1)
    ds = small_dataset(config)
    fig = figures.forecast_figure(ds, train.run_training(ds, config))
    assert np.issubdtype(np.asarray(fig.data[0].x).dtype, np.datetime64)
    shaded = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(shaded) == 2
    baselines = {str(train.forecaster_name(r)) for r in (train.PERSISTENCE_ROW, train.MA_ROW)}
    assert {t.name for t in fig.data} >= {"model forecast", *baselines}


def test_a_model_too_big_for_the_time_limit_is_refused_before_any_work():
    config = TrainConfig(seq_len=200, hidden_size=256, num_layers=4, cell="lstm_loop")
    prices = data.synthetic_prices("gbm", 0)
    ds = windows.prepare(prices, config.feature_names, config.target, config.seq_len, 15, 15)
    assert "too big to train live" in train.too_big(ds, config)
    with pytest.raises(ValueError, match="smaller hidden size"):
        next(train.train(ds, config))
    assert train.too_big(small_dataset(TrainConfig()), TrainConfig()) is None


def test_train_config_from_untrusted_params_clamps_swaps_and_never_raises():
    config, messages = TrainConfig.from_params({
        "seq_len": "999", "lr": "1e9", "ticker": ["ibm", "<b>"], "start_year": "2012",
        "end_year": "2003", "epochs": "nan", "features": "return+volume"})
    assert config.seq_len == 200 and config.lr == "0.01" and config.ticker == "aapl"
    assert (config.start_year, config.end_year) == (2003, 2012)
    assert config.epochs == EPOCHS.default and config.features == "return+close+ma"
    assert len(messages) == 6 and any("swapped" in m for m in messages)
    assert TrainConfig.from_params(None) == (TrainConfig(), [])
    assert TrainConfig().model_config.input_size == 3  # the seed example's three features


def test_price_chart_shades_exactly_what_plotlys_add_vrect_would():
    """Each span is named in the legend: a label drawn in the plot sat on the price line."""
    config = TrainConfig(epochs=1)
    ds = small_dataset(config)
    fig = figures.prices_figure(ds, "t")
    reference = go.Figure()
    for shape, name in zip(fig.layout.shapes, ("validation days", "test days (held out)"), strict=True):
        reference.add_vrect(x0=shape.x0, x1=shape.x1, fillcolor=shape.fillcolor, opacity=shape.opacity,
                            line_width=0, name=name, showlegend=True)
    assert fig.layout.shapes == reference.layout.shapes
    assert fig.layout.annotations == ()
    val_start, test_start = ds.target_day[[ds.n_train, ds.n_train + ds.n_val]]
    assert [s.x0 for s in fig.layout.shapes] == [ds.dates[val_start], ds.dates[test_start]]


def test_the_metrics_table_says_n_a_where_a_forecast_calls_no_move():
    metrics = pd.DataFrame({"RMSE": [1.0, 2.0], "MAE": [0.5, 1.0], "Direction": [0.55, math.nan]},
                           index=[train.MODEL_ROW, train.PERSISTENCE_ROW])
    shown = report.metrics_table(metrics)
    assert list(shown["Direction right"]) == ["55.0%", "n/a"]
    assert list(shown.index) == ["Model", "Persistence (tomorrow = today)"]
    assert list(shown.columns) == ["RMSE (price)", "MAE (price)", "Direction right"]


def with_curves(result: train.TrainResult, train_losses, val_losses) -> train.TrainResult:
    """``result`` with made-up curves: one Progress per epoch, the best validation epoch kept."""
    best = int(np.argmin(val_losses)) + 1
    history = tuple(train.Progress(i, len(val_losses), i / len(val_losses), t, v, best, 0.0, 0.0)
                    for i, (t, v) in enumerate(zip(train_losses, val_losses, strict=True), start=1))
    return dataclasses.replace(result, history=history, best_epoch=best)


@pytest.fixture(scope="module")
def default_run() -> train.TrainResult:
    config = TrainConfig()
    dataset, _ = data.load_dataset(config)
    return train.run_training(dataset, config)


def test_the_default_run_is_long_enough_to_watch_and_ends_in_its_story(default_run):
    assert len(default_run.history) == EPOCHS.default  # no early stop by default: every epoch runs
    first, last = default_run.history[0], default_run.history[-1]
    story = report.story(default_run)
    assert f"from {first.train_loss:.3f} to {last.train_loss:.3f}" in story
    # the words follow the run's own numbers
    assert ("**Training loss fell**" in story) == (last.train_loss < first.train_loss * 0.97)
    best = default_run.history[default_run.best_epoch - 1]
    assert f"epoch {best.epoch}'s" in story and f"{best.val_loss:.3f}" in story
    winner = default_run.baseline_wins
    assert ("the baseline wins" in story) == (winner is not None)


def test_the_story_tells_a_validation_loss_that_fell_then_rose(default_run):
    made_up = with_curves(default_run, [1.0, 0.9, 0.8, 0.7, 0.6], [1.0, 0.8, 0.7, 0.75, 0.9])
    story = report.story(made_up)
    assert "**Training loss fell** over 5 epochs, from 1.000 to 0.600" in story
    assert "**Validation loss fell** from 1.000 to 0.700 (epoch 3), then rose to 0.900" in story
    assert "The model kept is epoch 3's." in story


def test_the_story_tells_flat_curves_as_flat(default_run):
    made_up = with_curves(default_run, [1.0, 0.995, 0.99], [1.0, 1.01, 0.999])
    story = report.story(made_up)
    assert "**Training loss stayed level**" in story and "no better than at the start" in story
    assert "**Validation loss did not fall**" in story and "rose to" not in story


def test_the_forecast_chart_says_when_the_model_lies_on_persistence(default_run):
    f = default_run.forecasts
    gap = np.mean(np.abs(f["model"].to_numpy() - f["persistence"].to_numpy()) / f["persistence"].to_numpy())
    note = report.overlap_note(default_run)
    assert bool(note) == (gap < 0.005)
    if note:
        assert f"{gap:.2%}" in note
    moved = dataclasses.replace(default_run, forecasts=f.assign(model=f["persistence"] * 1.05))
    assert report.overlap_note(moved) == ""  # 5 % apart: two lines, nothing to say
