"""Prices in, windows out: input features, windows, a split by time, scaling.

A *prices* frame has one row per trading day, oldest first, with columns
``date`` (datetime64), ``close`` (float, > 0) and ``volume`` (float, NaN when
the source has none). ``prepare`` turns it into model-ready windows:

- features per day (log return, scaled close, close over its moving average,
  log volume), the first ``WARMUP`` days dropped so every feature is defined;
- windows of ``seq_len`` days, each paired with the next day's target;
- a split by time, never shuffled across it: the first windows train, the next
  validate, the last ones are held out for the test;
- standardisation fitted on the training days only, so nothing from the
  validation or test period leaks into the inputs the model trains on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from stockdemo.i18n import N_, tr

MA_WINDOW = 5  # days in the moving-average feature and baseline
WARMUP = MA_WINDOW - 1  # first days without a full moving average
MIN_WINDOWS = 40  # fewer windows cannot be split into train, validation and test
MIN_PART = 2  # windows at least in the validation and in the test part
# msgids: tr() them where shown.
FEATURE_LABELS: dict[str, str] = {
    "return": N_("log return: log(close / previous close)"),
    "close": N_("close price, standardised"),
    "ma": N_("close / 5-day moving average − 1"),
    "volume": N_("log(1 + volume), standardised"),
}
TARGET_LABELS: dict[str, str] = {
    "return": N_("the next trading day's log return"),
    "price": N_("the next trading day's close price"),
}


class DataError(ValueError):
    """A data problem a learner can fix; the message says how."""


@dataclass(frozen=True)
class Dataset:
    """Windows split by time. Day indices count from the first day kept after warm-up."""

    dates: np.ndarray  # (days,) datetime64[ns]
    close: np.ndarray  # (days + WARMUP,) every close, warm-up days first
    x: np.ndarray  # (windows, seq_len, features) float32, standardised
    y: np.ndarray  # (windows,) float32, standardised target
    target_day: np.ndarray  # (windows,) day index each window predicts
    n_train: int
    n_val: int
    feature_names: tuple[str, ...]
    target: str
    feature_mean: np.ndarray  # (features,) fitted on training days only
    feature_std: np.ndarray  # (features,)
    target_mean: float  # fitted on training targets only
    target_std: float

    @property
    def n_test(self) -> int:
        return len(self.y) - self.n_train - self.n_val

    @property
    def seq_len(self) -> int:
        return self.x.shape[1]

    def part(self, name: str) -> slice:
        """'train' | 'val' | 'test' -> the slice of windows in that part."""
        bounds = {"train": (0, self.n_train), "val": (self.n_train, self.n_train + self.n_val),
                  "test": (self.n_train + self.n_val, len(self.y))}
        return slice(*bounds[name])

    def previous_close(self, windows: slice) -> np.ndarray:
        """(windows,) the close on the last input day: 'today' for each forecast."""
        return self.close[self.target_day[windows] + WARMUP - 1]

    def next_close(self, windows: slice) -> np.ndarray:
        """(windows,) the close on the day each window predicts."""
        return self.close[self.target_day[windows] + WARMUP]


def min_rows(seq_len: int) -> int:
    """Trading days needed to make enough windows of ``seq_len`` days to split."""
    return WARMUP + seq_len + MIN_WINDOWS


def day_features(prices: pd.DataFrame, names: tuple[str, ...]) -> np.ndarray:
    """prices (days + WARMUP rows) -> (days, features) unscaled, warm-up days dropped."""
    close = prices["close"].to_numpy(float)
    columns = []
    for name in names:
        if name == "return":
            columns.append(np.log(close[WARMUP:] / close[WARMUP - 1:-1]))
        elif name == "close":
            columns.append(close[WARMUP:])
        elif name == "ma":
            average = np.convolve(close, np.ones(MA_WINDOW) / MA_WINDOW, mode="valid")
            columns.append(close[WARMUP:] / average - 1)
        elif name == "volume":
            volume = prices["volume"].to_numpy(float)[WARMUP:]
            if not np.isfinite(volume).all() or (volume < 0).any():
                raise DataError(tr("This data has no usable volume column: choose input features without "
                                   "volume."))
            columns.append(np.log1p(volume))
        else:
            raise ValueError(f"unknown feature {name!r}")
    return np.stack(columns, axis=1)


def prepare(prices: pd.DataFrame, feature_names: tuple[str, ...], target: str, seq_len: int,
            val_pct: int, test_pct: int) -> Dataset:
    """prices -> windows (windows, seq_len, features) and next-day targets, split and scaled."""
    close = prices["close"].to_numpy(float)
    if len(close) < min_rows(seq_len):
        raise DataError(tr("This data has {days} trading days; sequence length {T} needs at least {needed} "
                           "to make {windows} windows to split. Choose a longer date range or a shorter "
                           "sequence length.", days=len(close), T=seq_len, needed=min_rows(seq_len),
                           windows=MIN_WINDOWS))
    if not np.isfinite(close).all() or (close <= 0).any():
        raise DataError(tr("Every close must be a positive number to compute returns."))
    features = day_features(prices, feature_names)  # (days, features)
    days = len(features)
    if target == "return":
        day_target = features[:, 0] if feature_names[0] == "return" \
            else np.log(close[WARMUP:] / close[WARMUP - 1:-1])
    elif target == "price":
        day_target = close[WARMUP:]
    else:
        raise ValueError(f"unknown target {target!r}")

    # Window i reads days i .. i+seq_len-1 and predicts day i+seq_len.
    n_windows = days - seq_len
    target_day = np.arange(seq_len, days)
    n_test = max(MIN_PART, round(n_windows * test_pct / 100))
    n_val = max(MIN_PART, round(n_windows * val_pct / 100))
    n_train = n_windows - n_val - n_test

    # Scaling sees only the days training touches: its inputs and its targets.
    train_days = slice(0, int(target_day[n_train - 1]) + 1)
    mean = features[train_days].mean(axis=0)
    std = _safe_std(features[train_days])
    train_targets = day_target[target_day[:n_train]]
    t_mean, t_std = float(train_targets.mean()), float(_safe_std(train_targets))

    scaled = (features - mean) / std
    windows = np.lib.stride_tricks.sliding_window_view(scaled, seq_len, axis=0)[:n_windows]
    return Dataset(
        dates=prices["date"].to_numpy()[WARMUP:],
        close=close,
        x=np.ascontiguousarray(windows.transpose(0, 2, 1), dtype=np.float32),
        y=((day_target[target_day] - t_mean) / t_std).astype(np.float32),
        target_day=target_day,
        n_train=n_train,
        n_val=n_val,
        feature_names=feature_names,
        target=target,
        feature_mean=mean,
        feature_std=std,
        target_mean=t_mean,
        target_std=t_std,
    )


def _safe_std(values: np.ndarray) -> np.ndarray:
    """Standard deviation, with 1 where a column is constant (nothing to scale)."""
    std = values.std(axis=0)
    return np.where(std > 0, std, 1.0)
