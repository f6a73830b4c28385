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

from stockdemo.cells import CELL_LABELS, cell_of
from stockdemo.config import MAX_TRAIN_SECONDS, TRAIN_BATCH_SIZE, TrainConfig
from stockdemo.graph import Graph
from stockdemo.live.run import build
from stockdemo.train.step import training_step_graph
from stockdemo.train.windows import MA_WINDOW, TARGET_LABELS, WARMUP, Dataset

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
    stop_reason: str
    best_epoch: int
    forecasts: pd.DataFrame  # index test dates; columns actual, model, persistence, moving_average
    metrics: pd.DataFrame  # one row per forecaster: RMSE, MAE, direction
    step_graph: Graph  # autograd graph of one training step, prediction through loss
    seconds: float

    @property
    def baseline_wins(self) -> str | None:
        """Name of the best baseline if it beats the model on test RMSE, else None."""
        rmse = self.metrics["RMSE"]
        best = rmse.drop(MODEL_ROW).idxmin()
        return best if rmse[best] <= rmse[MODEL_ROW] else None


MODEL_ROW = "Model"
PERSISTENCE_ROW = "Persistence (tomorrow = today)"
MA_ROW = f"{MA_WINDOW}-day moving average"


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
    return (f"This model is too big to train live here: one pass over {len(dataset.y):,} windows "
            f"would take about {seconds:.0f} s, and training stops at {max_seconds:.0f} s. Use a "
            "smaller hidden size, fewer layers, a shorter sequence or a shorter date range.")


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
    stop_reason = f"reached the maximum of {config.epochs} epochs"
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
            stop_reason = f"stopped at the {max_seconds:.0f} s time limit, in epoch {epoch}"
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
            stop_reason = (f"stopped early after epoch {epoch}: validation loss had not improved "
                           f"for {config.patience} epochs")
            break
        if now - started > max_seconds:
            stop_reason = f"stopped at the {max_seconds:.0f} s time limit after epoch {epoch}"
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


def describe(config: TrainConfig, dataset: Dataset) -> str:
    """One sentence: what the model reads and what it predicts."""
    return (f"{CELL_LABELS[config.cell]} reads {dataset.seq_len} days of "
            f"{len(dataset.feature_names)} feature{'s' if len(dataset.feature_names) > 1 else ''} "
            f"and predicts **{TARGET_LABELS[dataset.target]}**.")


# --- Words and tables for the page ------------------------------------------------

def describe_data(name: str, dataset: Dataset, config: TrainConfig) -> str:
    """What the data is, how it was cut, and what the model reads and predicts (markdown)."""
    first_day, last_day = np.datetime_as_string(dataset.dates[[0, -1]], unit="D")
    return (f"**{name}**: {len(dataset.dates):,} trading days from {first_day} to {last_day}, "
            f"cut into {len(dataset.y):,} windows: **{dataset.n_train:,}** to train, "
            f"**{dataset.n_val:,}** to validate (they pick the epoch kept), **{dataset.n_test:,}** "
            f"held out to test. {describe(config, dataset)} Scaling is fitted on the training days only; the "
            "split follows time and is never shuffled across it.")


def progress_text(event: Progress) -> str:
    """One line for the progress bar: the epoch, its losses, the time so far."""
    if event.val_loss is None:  # a report from inside a long epoch
        status = (f"Epoch {event.epoch + 1}/{event.max_epochs} running · training loss so far "
                  f"{event.train_loss:.4f}")
    else:
        status = (f"Epoch {event.epoch}/{event.max_epochs} · training loss {event.train_loss:.4f} "
                  f"· validation loss {event.val_loss:.4f}")
    return f"{status} · {event.elapsed:.1f} s"


def stopped_text(partial: list[Progress]) -> str:
    when = f"after epoch {partial[-1].epoch}" if partial else "before the first epoch finished"
    return f"Training stopped {when}. Press **Train** to start again."


# A loss "fell" or "rose" when it moved by more than this share: epoch to epoch the
# validation loss of the default run wobbles by 1-3 % without any trend.
SAME_WITHIN = 0.03


def _moved(start: float, end: float) -> str:
    if end < start * (1 - SAME_WITHIN):
        return "fell"
    if end > start * (1 + SAME_WITHIN):
        return "rose"
    return "stayed level"


def story(result: TrainResult) -> str:
    """What the two curves did and what the test days say, in three sentences (markdown).

    Read off the run itself: its first, best and last epochs, and the verdict on
    the test days.
    """
    history = result.history
    if not history:
        return "No epoch finished, so there are no curves to read."
    first, last = history[0], history[-1]
    best = history[result.best_epoch - 1]
    span = f"over {len(history)} epoch{'s' if len(history) > 1 else ''}"
    trained = _moved(first.train_loss, last.train_loss)
    lines = [f"**Training loss {trained}** {span}, from {first.train_loss:.3f} to "
             f"{last.train_loss:.3f}: the model fits the days it trains on"
             + (" better and better." if trained == "fell" else " no better than at the start.")]
    if _moved(first.val_loss, best.val_loss) == "fell":
        checked = (f"**Validation loss fell** from {first.val_loss:.3f} to {best.val_loss:.3f} "
                   f"(epoch {best.epoch})")
        checked += (f", then rose to {last.val_loss:.3f}: past epoch {best.epoch} the model "
                    "learned the training days' noise." if _moved(best.val_loss, last.val_loss) == "rose"
                    else ".")
    else:
        rose = _moved(best.val_loss, last.val_loss) == "rose"
        noise = ": tomorrow's return is mostly noise" if result.config.target == "return" else ""
        checked = (f"**Validation loss did not fall**: its lowest, {best.val_loss:.3f} at epoch "
                   f"{best.epoch}, is about where it began ({first.val_loss:.3f})"
                   + (f", and it rose to {last.val_loss:.3f} by epoch {last.epoch}" if rose else "")
                   + ". What the model learned about the training days does not carry over to days "
                   f"it has not seen{noise}.")
    lines.append(checked + f" The model kept is epoch {best.epoch}'s.")
    winner = result.baseline_wins
    rmse = result.metrics["RMSE"]
    lines.append(f"**On the held-out test days the baseline wins**: *{winner}* {rmse[winner]:.3f} "
                 f"against the model's {rmse[MODEL_ROW]:.3f} (RMSE)." if winner else
                 f"**On the held-out test days the model beats both baselines** (RMSE "
                 f"{rmse[MODEL_ROW]:.3f}).")
    return "\n\n".join(lines)


# Forecasts closer than this, on average, as a share of the price, draw as one line.
SAME_LINE = 0.005


def overlap_note(result: TrainResult) -> str:
    """Said under the forecast chart when the model's line lies on persistence's, else ""."""
    f = result.forecasts
    gap = float(np.mean(np.abs(f["model"] - f["persistence"]) / f["persistence"]))
    if gap >= SAME_LINE:
        return ""
    return (f"The model's forecast is on average {gap:.2%} from yesterday's close, which is "
            "persistence's forecast: the two lines lie on each other (the model's is the wide, faint "
            "one). A model that learned little about tomorrow predicts almost no move.")


def summary(result: TrainResult) -> str:
    """Why training ended, which epoch's model is kept, and how long it took."""
    kept = (f"the model kept is the one from epoch {result.best_epoch} (best validation loss)"
            if result.best_epoch else "no epoch finished, so the model is untrained")
    return f"Training {result.stop_reason}; {kept}. {result.seconds:.1f} s in all."


def metrics_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """The metrics as shown: prices named as such, direction as a share or "n/a" (the page says why)."""
    shown = metrics.copy()
    shown["Direction"] = [("n/a" if math.isnan(d) else f"{d:.1%}")
                          for d in metrics["Direction"]]
    return shown.rename(columns={"RMSE": "RMSE (price)", "MAE": "MAE (price)",
                                 "Direction": "Direction right"})


def verdict(result: TrainResult) -> str:
    """Does the model beat the baselines on the test days? Said plainly, with the numbers."""
    rmse = result.metrics["RMSE"]
    winner = result.baseline_wins
    if winner:
        return (f"**The baseline wins.** *{winner}* has a lower test RMSE ({rmse[winner]:.3f}) "
                f"than the model ({rmse[MODEL_ROW]:.3f}). That is the usual result on daily "
                "prices: yesterday's close is a hard forecast to beat, and a model that seems to "
                "follow the price is mostly copying it.")
    return (f"**The model beats both baselines** on test RMSE ({rmse[MODEL_ROW]:.3f} against "
            f"{rmse[PERSISTENCE_ROW]:.3f} and {rmse[MA_ROW]:.3f}). Before believing it, try other "
            "seeds, tickers and date ranges: one lucky split proves little.")
