"""Train a fresh StockPredictor on windows of prices, live, and judge it honestly.

``train`` is a generator: it yields a ``Progress`` after every epoch (and
within long epochs, so a page can redraw and stop it), then one final
``TrainResult`` with the test metrics of the model next to two baselines that
are computed, not assumed: persistence ("tomorrow = today") and the
moving average of the last days. All metrics are in price units on the
held-out test days.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from stockdemo.cells import cell_of
from stockdemo.config import MAX_TRAIN_SECONDS, TRAIN_BATCH_SIZE, TrainConfig
from stockdemo.graph import OUTPUT_ID, Graph
from stockdemo.graph.capture import capture_graph
from stockdemo.i18n import Message, later, later_n, tr
from stockdemo.live.run import build
from stockdemo.train.windows import MA_WINDOW, WARMUP, Dataset

HEARTBEAT_S = 0.25  # a long epoch still reports this often, so the page can redraw and stop
# Work budget of one thread, below what was measured (docs/decisions.md), since the box is shared:
# arithmetic per second, and the Python and autograd cost of each cell call on a batch.
FLOPS_PER_SECOND = 5e9
STEP_OVERHEAD_S = 1e-4


@dataclass(frozen=True)
class Progress:
    """Where training is. ``val_loss`` is None for a report from inside an epoch."""

    epoch: int  # epochs finished
    max_epochs: int
    fraction: float  # 0..1 of the epoch budget done
    train_loss: float  # mean MSE over this epoch's batches so far (standardised target)
    val_loss: float | None
    best_epoch: int
    epoch_seconds: float
    elapsed: float


@dataclass(frozen=True)
class TrainResult:
    config: TrainConfig
    history: tuple[Progress, ...]  # one per finished epoch
    stop_reason: Message  # made in the worker, said in the reader's language
    best_epoch: int
    forecasts: pd.DataFrame  # index test dates; columns actual, model, persistence, moving_average
    metrics: pd.DataFrame  # one row per forecaster: RMSE, MAE, direction
    step_graph: Graph  # autograd graph of one training step, prediction through loss
    seconds: float

    @property
    def baseline_wins(self) -> str | None:
        """The row (``forecaster_name``) of the best baseline if it beats the model on test RMSE,
        else None."""
        rmse = self.metrics["RMSE"]
        best = rmse.drop(MODEL_ROW).idxmin()
        return best if rmse[best] <= rmse[MODEL_ROW] else None


# The metrics' rows: stable keys (a table, a CSV, the lesson read them); ``forecaster_name`` says them.
MODEL_ROW = "model"
PERSISTENCE_ROW = "persistence"
MA_ROW = "moving_average"
_NAMES = {MODEL_ROW: later("Model"), PERSISTENCE_ROW: later("Persistence (tomorrow = today)"),
          MA_ROW: later("{days}-day moving average", days=MA_WINDOW)}


def forecaster_name(row: str) -> Message:
    """What a forecaster (a metrics row, a forecasts column) is called, in the reader's language."""
    return _NAMES[row]


# --- Baselines and metrics ------------------------------------------------------

def persistence_baseline(close: np.ndarray) -> np.ndarray:
    """close: (days,) -> (days - 1,) forecasts for days 1.. : tomorrow's close = today's."""
    return close[:-1].copy()


def moving_average_baseline(close: np.ndarray, window: int = MA_WINDOW) -> np.ndarray:
    """close: (days,) -> (days - window,) forecasts for days window.. : mean of the last ``window`` closes."""
    return np.convolve(close, np.ones(window) / window, mode="valid")[:-1]


def forecast_metrics(actual: np.ndarray, forecast: np.ndarray, previous: np.ndarray) -> dict[str, float]:
    """(days,) each -> RMSE, MAE and directional accuracy.

    Direction: the share of days that moved on which the forecast called the
    move (up or down from ``previous``) right. A forecast that never calls a
    move (persistence) has none: NaN.
    """
    error = forecast - actual
    moved = actual != previous
    called = forecast != previous
    direction = float("nan")
    if called.any() and moved.any():
        direction = float(np.mean(np.sign(forecast - previous)[moved] == np.sign(actual - previous)[moved]))
    return {"RMSE": float(np.sqrt(np.mean(error**2))), "MAE": float(np.mean(np.abs(error))),
            "Direction": direction}


# --- Training --------------------------------------------------------------------

def estimated_seconds(dataset: Dataset, config: TrainConfig) -> float:
    """Rough time of one training epoch plus the validation and test passes, before running it."""
    h, f, layers = config.hidden_size, len(config.feature_names), config.num_layers
    gates = cell_of(config.cell).gates
    flops_per_window = 2 * gates * h * ((f + h) + (layers - 1) * 2 * h) * config.seq_len
    passes = 3 * dataset.n_train + dataset.n_val + dataset.n_test  # backward ~ twice the forward
    cell_calls = (3 * math.ceil(dataset.n_train / TRAIN_BATCH_SIZE) + 2) * config.seq_len * layers
    return passes * flops_per_window / FLOPS_PER_SECOND + cell_calls * STEP_OVERHEAD_S


def too_big(dataset: Dataset, config: TrainConfig, max_seconds: float = MAX_TRAIN_SECONDS) -> str | None:
    """A message if one epoch would take more than half the time limit on this data, else None."""
    seconds = estimated_seconds(dataset, config)
    if seconds <= max_seconds / 2:
        return None
    return tr("This model is too big to train live here: one pass over {windows} windows would take "
              "about {seconds} s, and training stops at {limit} s. Use a smaller hidden size, fewer "
              "layers, a shorter sequence or a shorter date range.", windows=len(dataset.y),
              seconds=round(seconds), limit=round(max_seconds))


def train(dataset: Dataset, config: TrainConfig,
          max_seconds: float = MAX_TRAIN_SECONDS) -> Iterator[Progress | TrainResult]:
    """Adam on MSE, the epoch with the best validation loss kept, bounded by epochs and wall time.

    With ``config.patience`` set, training also stops once the validation loss
    has not improved for that many epochs (early stopping).

    Builds a fresh model from ``config.seed`` (never one shared with other
    sessions); batches are shuffled within the training part only, by a
    generator seeded the same way, so the same settings give the same curves.
    Raises ValueError, before any work, for a model ``too_big`` for the server's time limit.
    """
    refusal = too_big(dataset, config)
    if refusal:
        raise ValueError(refusal)
    started = time.perf_counter()
    _, model = build(config.model_config)
    # foreach: one op per step for all parameters, not one per parameter (torch's CPU
    # default); faster, with the same curves and forecasts bit for bit.
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate, foreach=True)
    loss_fn = nn.MSELoss()
    shuffle = torch.Generator().manual_seed(config.seed)
    x_train = torch.from_numpy(dataset.x[dataset.part("train")])  # (train, seq_len, features)
    y_train = torch.from_numpy(dataset.y[dataset.part("train")]).unsqueeze(1)  # (train, 1)
    x_val = torch.from_numpy(dataset.x[dataset.part("val")])
    y_val = torch.from_numpy(dataset.y[dataset.part("val")]).unsqueeze(1)

    history: list[Progress] = []
    best_val, best_epoch, best_state = math.inf, 0, copy.deepcopy(model.state_dict())
    last_report = started
    stop_reason = later_n("reached the maximum of {n} epoch", "reached the maximum of {n} epochs",
                               config.epochs)
    for epoch in range(1, config.epochs + 1):
        epoch_start = time.perf_counter()
        order = torch.randperm(len(x_train), generator=shuffle)
        total, seen, out_of_time = 0.0, 0, False
        model.train()
        for first in range(0, len(order), TRAIN_BATCH_SIZE):
            batch = order[first:first + TRAIN_BATCH_SIZE]
            optimiser.zero_grad()
            loss = loss_fn(model(x_train[batch]), y_train[batch])
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
            seen += len(batch)
            now = time.perf_counter()
            if now - started > max_seconds:
                out_of_time = True
                break
            if now - last_report > HEARTBEAT_S:
                last_report = now
                yield Progress(epoch - 1, config.epochs, (epoch - 1 + seen / len(order)) / config.epochs,
                               total / seen, None, best_epoch, now - epoch_start, now - started)
        if out_of_time:
            stop_reason = later("stopped at the {limit} s time limit, in epoch {epoch}",
                                limit=round(max_seconds), epoch=epoch)
            break
        model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), y_val).item()
        if val_loss < best_val:
            best_val, best_epoch, best_state = val_loss, epoch, copy.deepcopy(model.state_dict())
        now = time.perf_counter()
        last_report = now
        progress = Progress(epoch, config.epochs, epoch / config.epochs, total / seen, val_loss,
                            best_epoch, now - epoch_start, now - started)
        history.append(progress)
        yield progress
        if config.patience and epoch - best_epoch >= config.patience:
            stop_reason = later_n("stopped early after epoch {epoch}: validation loss had not "
                                       "improved for {n} epoch", "stopped early after epoch {epoch}: "
                                       "validation loss had not improved for {n} epochs",
                                       config.patience, epoch=epoch)
            break
        if now - started > max_seconds:
            stop_reason = later("stopped at the {limit} s time limit after epoch {epoch}",
                                limit=round(max_seconds), epoch=epoch)
            break

    model.load_state_dict(best_state)  # the epoch with the best validation loss
    model.eval()
    forecasts = test_forecasts(model, dataset)
    previous = dataset.previous_close(dataset.part("test"))
    metrics = pd.DataFrame({
        name: forecast_metrics(forecasts["actual"].to_numpy(), forecasts[column].to_numpy(), previous)
        for name, column in ((MODEL_ROW, "model"), (PERSISTENCE_ROW, "persistence"),
                             (MA_ROW, "moving_average"))
    }).T
    yield TrainResult(
        config=config,
        history=tuple(history),
        stop_reason=stop_reason,
        best_epoch=best_epoch,
        forecasts=forecasts,
        metrics=metrics,
        step_graph=training_step_graph(model, x_train[:TRAIN_BATCH_SIZE], y_train[:TRAIN_BATCH_SIZE]),
        seconds=time.perf_counter() - started,
    )


def run_training(dataset: Dataset, config: TrainConfig,
                 max_seconds: float = MAX_TRAIN_SECONDS) -> TrainResult:
    """Train to the end without a page (tests, the benchmark, a notebook)."""
    *_, result = train(dataset, config, max_seconds)
    return result


def test_forecasts(model: nn.Module, dataset: Dataset) -> pd.DataFrame:
    """Next-day close on each test day: actual, the model's, and the two baselines'."""
    test = dataset.part("test")
    with torch.no_grad():
        scaled = model(torch.from_numpy(dataset.x[test]))[:, 0].numpy().astype(float)  # (test,)
    predicted = scaled * dataset.target_std + dataset.target_mean
    previous = dataset.previous_close(test)
    model_close = previous * np.exp(predicted) if dataset.target == "return" else predicted
    days = dataset.target_day[test] + WARMUP  # index into close
    return pd.DataFrame({
        "actual": dataset.next_close(test),
        "model": model_close,
        "persistence": persistence_baseline(dataset.close)[days - 1],
        "moving_average": moving_average_baseline(dataset.close)[days - MA_WINDOW],
    }, index=pd.DatetimeIndex(dataset.dates[dataset.target_day[test]], name="date"))


def training_step_graph(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Graph:
    """The autograd graph of one training step, prediction through loss.

    x: (batch, seq_len, features), y: (batch, 1). Nothing is stepped: the
    graph is recorded by the forward pass and the loss alone.
    """
    with torch.enable_grad():
        loss = nn.functional.mse_loss(model(x), y)  # () scalar
    graph = capture_graph(loss, model, x)
    nodes = tuple(n._replace(label="loss (MSE)") if n.id == OUTPUT_ID else n for n in graph.nodes)
    return Graph(nodes, graph.edges, graph.meta)
