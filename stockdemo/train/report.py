"""What the Train and predict page says about a training run: the data and its cut, each
epoch's line, the two curves' story, the verdict on the test days and the metrics table,
read off the run itself (``stockdemo.train.training``), in the reader's language.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stockdemo.cells import CELL_LABELS
from stockdemo.config import TrainConfig
from stockdemo.i18n import later, tr, trn
from stockdemo.i18n import number as written
from stockdemo.i18n.numbers import day, percent
from stockdemo.train.training import (
    MA_ROW,
    MODEL_ROW,
    PERSISTENCE_ROW,
    Progress,
    TrainResult,
    forecaster_name,
)
from stockdemo.train.windows import TARGET_LABELS, Dataset


def describe(config: TrainConfig, dataset: Dataset) -> str:
    """One sentence: what the model reads and what it predicts."""
    return trn("{cell} reads {days} days of {n} feature and predicts **{target}**.",
               "{cell} reads {days} days of {n} features and predicts **{target}**.",
               len(dataset.feature_names), cell=tr(CELL_LABELS[config.cell]), days=dataset.seq_len,
               target=tr(TARGET_LABELS[dataset.target]))


def describe_data(name: str, dataset: Dataset, config: TrainConfig) -> str:
    """What the data is, how it was cut, and what the model reads and predicts (markdown)."""
    first_day, last_day = np.datetime_as_string(dataset.dates[[0, -1]], unit="D")
    return tr("**{name}**: {days} trading days from {first} to {last}, cut into {windows} windows: "
              "**{train}** to train, **{val}** to validate (they pick the epoch kept), **{test}** held out "
              "to test. {model} Scaling is fitted on the training days only; the split follows time and "
              "is never shuffled across it.", name=name, days=len(dataset.dates), first=day(first_day),
              last=day(last_day), windows=len(dataset.y), train=dataset.n_train, val=dataset.n_val,
              test=dataset.n_test, model=describe(config, dataset))


def progress_text(event: Progress) -> str:
    """One line for the progress bar: the epoch, its losses, the time so far."""
    if event.val_loss is None:  # a report from inside a long epoch
        return tr("Epoch {epoch}/{epochs} running · training loss so far {train} · {seconds} s",
                  epoch=event.epoch + 1, epochs=event.max_epochs, train=written(event.train_loss, 4),
                  seconds=written(event.elapsed, 1))
    return tr("Epoch {epoch}/{epochs} · training loss {train} · validation loss {val} · {seconds} s",
              epoch=event.epoch, epochs=event.max_epochs, train=written(event.train_loss, 4),
              val=written(event.val_loss, 4), seconds=written(event.elapsed, 1))


def stopped_text(partial: list[Progress]) -> str:
    if partial:
        return tr("Training stopped after epoch {epoch}. Press **Train** to start again.",
                  epoch=partial[-1].epoch)
    return tr("Training stopped before the first epoch finished. Press **Train** to start again.")


# A loss "fell" or "rose" when it moved by more than this share: epoch to epoch the
# validation loss of the default run wobbles by 1-3 % without any trend.
SAME_WITHIN = 0.03


def _moved(start: float, end: float) -> str:
    if end < start * (1 - SAME_WITHIN):
        return "fell"
    if end > start * (1 + SAME_WITHIN):
        return "rose"
    return "stayed level"


def _loss(value: float) -> str:
    return written(value, 3)


def _training_line(history: tuple[Progress, ...]) -> str:
    first, last = history[0], history[-1]
    n, values = len(history), {"first": _loss(first.train_loss), "last": _loss(last.train_loss)}
    if _moved(first.train_loss, last.train_loss) == "fell":
        return trn("**Training loss fell** over {n} epoch, from {first} to {last}: the model fits the days "
                   "it trains on better and better.", "**Training loss fell** over {n} epochs, from {first} "
                   "to {last}: the model fits the days it trains on better and better.", n, **values)
    if _moved(first.train_loss, last.train_loss) == "rose":
        return trn("**Training loss rose** over {n} epoch, from {first} to {last}: the model fits the days "
                   "it trains on no better than at the start.", "**Training loss rose** over {n} epochs, "
                   "from {first} to {last}: the model fits the days it trains on no better than at the "
                   "start.", n, **values)
    return trn("**Training loss stayed level** over {n} epoch, from {first} to {last}: the model fits the "
               "days it trains on no better than at the start.", "**Training loss stayed level** over {n} "
               "epochs, from {first} to {last}: the model fits the days it trains on no better than at "
               "the start.", n, **values)


def _validation_line(result: TrainResult) -> str:
    history = result.history
    first, last = history[0], history[-1]
    best = history[result.best_epoch - 1]
    values = {"first": _loss(first.val_loss), "best": _loss(best.val_loss), "last": _loss(last.val_loss),
              "epoch": best.epoch, "last_epoch": last.epoch}
    rose = _moved(best.val_loss, last.val_loss) == "rose"
    if _moved(first.val_loss, best.val_loss) == "fell":
        if rose:
            return tr("**Validation loss fell** from {first} to {best} (epoch {epoch}), then rose to {last}: "
                      "past epoch {epoch} the model learned the training days' noise.", **values)
        return tr("**Validation loss fell** from {first} to {best} (epoch {epoch}).", **values)
    noise = result.config.target == "return"
    if rose and noise:
        return tr("**Validation loss did not fall**: its lowest, {best} at epoch {epoch}, is about where it "
                  "began ({first}), and it rose to {last} by epoch {last_epoch}. What the model learned "
                  "about the training days does not carry over to days it has not seen: tomorrow's return "
                  "is mostly noise.", **values)
    if rose:
        return tr("**Validation loss did not fall**: its lowest, {best} at epoch {epoch}, is about where it "
                  "began ({first}), and it rose to {last} by epoch {last_epoch}. What the model learned "
                  "about the training days does not carry over to days it has not seen.", **values)
    if noise:
        return tr("**Validation loss did not fall**: its lowest, {best} at epoch {epoch}, is about where it "
                  "began ({first}). What the model learned about the training days does not carry over to "
                  "days it has not seen: tomorrow's return is mostly noise.", **values)
    return tr("**Validation loss did not fall**: its lowest, {best} at epoch {epoch}, is about where it "
              "began ({first}). What the model learned about the training days does not carry over to days "
              "it has not seen.", **values)


def story(result: TrainResult) -> str:
    """What the two curves did and what the test days say, in three sentences (markdown).

    Read off the run itself: its first, best and last epochs, and the verdict on
    the test days.
    """
    if not result.history:
        return tr("No epoch finished, so there are no curves to read.")
    kept = tr("The model kept is epoch {epoch}'s.", epoch=result.history[result.best_epoch - 1].epoch)
    winner = result.baseline_wins
    rmse = result.metrics["RMSE"]
    if winner:
        test = tr("**On the held-out test days the baseline wins**: *{baseline}* {rmse} against the model's "
                  "{model} (RMSE).", baseline=forecaster_name(winner), rmse=_loss(rmse[winner]),
                  model=_loss(rmse[MODEL_ROW]))
    else:
        test = tr("**On the held-out test days the model beats both baselines** (RMSE {model}).",
                  model=_loss(rmse[MODEL_ROW]))
    return "\n\n".join([_training_line(result.history), f"{_validation_line(result)} {kept}", test])


# Forecasts closer than this, on average, as a share of the price, draw as one line.
SAME_LINE = 0.005


def overlap_note(result: TrainResult) -> str:
    """Said under the forecast chart when the model's line lies on persistence's, else ""."""
    f = result.forecasts
    gap = float(np.mean(np.abs(f["model"] - f["persistence"]) / f["persistence"]))
    if gap >= SAME_LINE:
        return ""
    return tr("The model's forecast is on average {gap} from yesterday's close, which is persistence's "
              "forecast: the two lines lie on each other (the model's is the wide, faint one). A model that "
              "learned little about tomorrow predicts almost no move.", gap=percent(gap, 2))


def summary(result: TrainResult) -> str:
    """Why training ended, which epoch's model is kept, and how long it took."""
    if result.best_epoch:
        return tr("Training {reason}; the model kept is the one from epoch {epoch} (best validation loss). "
                  "{seconds} s in all.", reason=result.stop_reason, epoch=result.best_epoch,
                  seconds=written(result.seconds, 1))
    return tr("Training {reason}; no epoch finished, so the model is untrained. {seconds} s in all.",
              reason=result.stop_reason, seconds=written(result.seconds, 1))


# The metrics table's columns as shown (msgids), by the column's key.
METRIC_COLUMNS = {"RMSE": later("RMSE (price)"), "MAE": later("MAE (price)"),
                  "Direction": later("Direction right")}


def metrics_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """The metrics as shown: forecasters and columns named in the reader's language, prices named
    as such, direction as a share or "n/a" (the page says why)."""
    shown = metrics.copy()
    shown["Direction"] = [(tr("n/a") if math.isnan(d) else percent(d, 1)) for d in metrics["Direction"]]
    shown.index = [str(forecaster_name(row)) for row in metrics.index]
    return shown.rename(columns={key: str(name) for key, name in METRIC_COLUMNS.items()})


def verdict(result: TrainResult) -> str:
    """Does the model beat the baselines on the test days? Said plainly, with the numbers."""
    rmse = result.metrics["RMSE"]
    winner = result.baseline_wins
    if winner:
        return tr("**The baseline wins.** *{baseline}* has a lower test RMSE ({rmse}) than the model "
                  "({model}). That is the usual result on daily prices: yesterday's close is a hard forecast "
                  "to beat, and a model that seems to follow the price is mostly copying it.",
                  baseline=forecaster_name(winner), rmse=_loss(rmse[winner]), model=_loss(rmse[MODEL_ROW]))
    return tr("**The model beats both baselines** on test RMSE ({model} against {persistence} and "
              "{average}). Before believing it, try other seeds, tickers and date ranges: one lucky split "
              "proves little.", model=_loss(rmse[MODEL_ROW]), persistence=_loss(rmse[PERSISTENCE_ROW]),
              average=_loss(rmse[MA_ROW]))
