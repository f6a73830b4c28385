"""Prices in, windows out: three data sources, input features, a split by time, scaling.

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

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from stockdemo.config import TRAIN_LABELS, TrainConfig

BUNDLED = Path(__file__).resolve().parent / "data" / "stocks.csv.gz"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # also server.maxUploadSize in .streamlit/config.toml
MA_WINDOW = 5  # days in the moving-average feature and baseline
WARMUP = MA_WINDOW - 1  # first days without a full moving average
MIN_WINDOWS = 40  # fewer windows cannot be split into train, validation and test
MIN_PART = 2  # windows at least in the validation and in the test part
SYNTH_DAYS = 750  # about three years of trading days
FEATURE_LABELS: dict[str, str] = {
    "return": "log return: log(close / previous close)",
    "close": "close price, standardised",
    "ma": f"close / {MA_WINDOW}-day moving average − 1",
    "volume": "log(1 + volume), standardised",
}
TARGET_LABELS: dict[str, str] = {
    "return": "the next trading day's log return",
    "price": "the next trading day's close price",
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


# --- Sources -----------------------------------------------------------------

@lru_cache(maxsize=1)
def _bundled_table() -> pd.DataFrame:
    """The vendored file, read once per process (read-only, shared)."""
    return pd.read_csv(BUNDLED, parse_dates=["Date"])


def load_stock(ticker: str, start_year: int, end_year: int) -> pd.DataFrame:
    """Bundled daily prices of one ticker (Close, not Adj Close) -> prices frame."""
    table = _bundled_table()
    rows = table[(table["Ticker"] == ticker.upper())
                 & (table["Date"].dt.year >= start_year) & (table["Date"].dt.year <= end_year)]
    if rows.empty:
        raise DataError(f"{ticker.upper()} has no prices from {start_year} to {end_year}: "
                        "widen the year range (FB starts in May 2012, GOOG in August 2004).")
    return pd.DataFrame({"date": rows["Date"].to_numpy(), "close": rows["Close"].to_numpy(float),
                         "volume": rows["Volume"].to_numpy(float)})


def synthetic_prices(series: str, seed: int, days: int = SYNTH_DAYS) -> pd.DataFrame:
    """A seeded made-up price series on business days from 2010 -> prices frame.

    noise: 100 + N(0, 1) each day, the seed example's ``torch.randn`` as prices;
    walk: 100 plus a running sum of N(0, 1) steps; gbm: geometric Brownian
    motion (1.5 % daily volatility); sine: a 50-day sine plus noise.
    """
    rng = np.random.default_rng(seed)
    steps = rng.standard_normal(days)
    t = np.arange(days)
    if series == "noise":
        close = 100 + steps
    elif series == "walk":
        close = 100 + np.cumsum(steps)
        close += max(0.0, 10 - close.min())  # keep prices positive so log returns exist
    elif series == "gbm":
        sigma, mu = 0.015, 0.0003
        close = 100 * np.exp(np.cumsum(mu - sigma**2 / 2 + sigma * steps))
    elif series == "sine":
        close = 100 + 10 * np.sin(2 * np.pi * t / 50) + steps
    else:
        raise ValueError(f"unknown synthetic series {series!r}")
    volume = rng.lognormal(mean=13, sigma=0.3, size=days)
    return pd.DataFrame({"date": pd.bdate_range("2010-01-04", periods=days),
                         "close": close, "volume": volume})


_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip archive or an Excel .xlsx workbook",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
    b"\x1f\x8b": "a gzip archive",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
}
_DATE_NAMES = ("date", "datetime", "timestamp", "time", "day")
_PRICE_NAMES = ("close", "adj close", "adj_close", "price", "last", "value")


def read_prices_csv(data: bytes, min_rows: int = 2) -> pd.DataFrame:
    """An uploaded CSV -> frame with a ``date`` column and every numeric column.

    Accepts a plain ``Date,Close`` file and a typical export
    (``Date,Open,High,Low,Close,Adj Close,Volume``) as they are; pick the
    price column afterwards with ``prices_from_table``. Dates must run oldest
    first, one row per day. Raises only ``DataError``, with a fix in its message.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        raise DataError(f"The file is {len(data) / 2**20:.1f} MB; the limit is "
                        f"{MAX_UPLOAD_BYTES // 2**20} MB. Keep only the date and price columns "
                        "or a shorter date range.")
    if not data.strip():
        raise DataError("The file is empty. Export a CSV with a header line such as "
                        "Date,Close and one row per day.")
    text = _decode(data)
    if not text.strip():
        raise DataError("The file has no text in it. Export a CSV with a header line such as "
                        "Date,Close and one row per day.")
    table = _parse_csv(text)
    if table.empty:
        raise DataError(f"The file has a header ({', '.join(map(str, table.columns))}) "
                        "but no rows of data.")
    dates, date_col = _date_column(table)
    numeric = _numeric_columns(table.drop(columns=[date_col]))
    _check_dates(dates)
    if len(table) < min_rows:
        raise DataError(f"The file has {len(table)} rows; training needs at least {min_rows} "
                        "for this sequence length (windows for training, validation and test). "
                        "Upload a longer history or choose a shorter sequence length.")
    return pd.concat([pd.Series(dates, name="date"), numeric], axis=1)


def _decode(data: bytes) -> str:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            raise DataError(f"This looks like {kind}, not a CSV text file. "
                            "Open it and save or export it as CSV.")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError("The file is saved as UTF-16 text. Save it again as CSV UTF-8.")
    head = data[:4096]
    controls = sum(b < 9 or 13 < b < 32 for b in head)
    if b"\x00" in head or controls > len(head) // 100:
        raise DataError("This looks like a binary file, not CSV text. Export your prices as CSV "
                        "(a text file with a header line such as Date,Close).")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataError(f"The file is not UTF-8 text (byte 0x{data[err.start]:02x} at position "
                        f"{err.start}). Save it again as CSV UTF-8.") from None


def _parse_csv(text: str) -> pd.DataFrame:
    header = text.splitlines()[0]
    sep = max((",", ";", "\t"), key=header.count)
    try:
        table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                            skipinitialspace=True)
    except Exception as err:  # noqa: BLE001 - untrusted text: any parser failure is the file's
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DataError(f"The file could not be read as CSV ({first}). Check that every row "
                        "has the same number of comma-separated values as the header.") from None
    table.columns = [str(c).strip() for c in table.columns]
    return table


def _date_column(table: pd.DataFrame) -> tuple[pd.Series, str]:
    """The date column (by name, else the first column that parses as dates) -> dates, name."""
    named = [c for c in table.columns if c.lower() in _DATE_NAMES]
    for col in named + [c for c in table.columns if c not in named]:
        dates = _parse_dates(table[col])
        if dates.notna().mean() >= 0.9:
            bad = dates.isna().to_numpy().nonzero()[0]
            if len(bad):
                row = int(bad[0])
                raise DataError(f"Row {row + 1}: {table[col].iloc[row]!r} in column {col} is "
                                "not a date. Use dates like 2013-03-01 in every row.")
            return dates.reset_index(drop=True), col
    raise DataError("No date column found. Add a column named Date with dates like 2013-03-01.")


def _parse_dates(column: pd.Series) -> pd.Series:
    text = column.str.strip()
    if text.str.fullmatch(r"[-+]?\d+(\.\d*)?").mean() > 0.5:
        return pd.Series(pd.NaT, index=column.index)  # plain numbers are prices, not dates
    for fmt in ("ISO8601", "mixed"):
        try:
            dates = pd.to_datetime(text, errors="coerce", format=fmt)
        except (ValueError, TypeError, OverflowError):
            continue
        if dates.dt.tz is not None:
            dates = dates.dt.tz_localize(None)
        if dates.notna().mean() >= 0.9:
            return dates
    return pd.Series(pd.NaT, index=column.index)


def _numeric_columns(table: pd.DataFrame) -> pd.DataFrame:
    """Columns that are mostly numbers -> float frame; any gap, NaN or infinity is an error."""
    numeric = {}
    for col in table.columns:
        text = table[col].str.strip()
        values = pd.to_numeric(text, errors="coerce")
        filled = text != ""
        if filled.sum() == 0 or values[filled].notna().mean() < 0.5:
            continue  # a text column (a ticker name, a note): not a candidate
        bad = (~np.isfinite(values.to_numpy(float))).nonzero()[0]
        if len(bad):
            row = int(bad[0])
            shown = repr(text.iloc[row]) if text.iloc[row] else "an empty cell"
            raise DataError(f"Row {row + 1}, column {col}: {shown} is not a finite number "
                            "(a gap, NaN or infinity). Remove that row or fill it in, then "
                            "upload again.")
        numeric[col] = values.astype(float).reset_index(drop=True)
    if not numeric:
        raise DataError("No numeric column found. The file needs a price column such as "
                        "Close with numbers like 130.31.")
    return pd.DataFrame(numeric)


def _check_dates(dates: pd.Series) -> None:
    values = dates.to_numpy()
    duplicated = dates.duplicated().to_numpy().nonzero()[0]
    if len(duplicated):
        row = int(duplicated[0])
        raise DataError(f"The date {dates.iloc[row]:%Y-%m-%d} appears more than once (row "
                        f"{row + 1}). Keep one row per day.")
    back = (values[1:] < values[:-1]).nonzero()[0]
    if len(back):
        row = int(back[0]) + 1
        raise DataError(f"Dates must run oldest first: row {row + 1} ({dates.iloc[row]:%Y-%m-%d}) "
                        f"comes after {dates.iloc[row - 1]:%Y-%m-%d}. Sort the file by date, "
                        "oldest first.")


def price_columns(table: pd.DataFrame) -> list[str]:
    """Numeric columns of a ``read_prices_csv`` table, the likeliest price first."""
    columns = [c for c in table.columns if c != "date"]
    rank = {name: i for i, name in enumerate(_PRICE_NAMES)}
    return sorted(columns, key=lambda c: (rank.get(c.lower(), len(rank)), columns.index(c)))


def volume_column(table: pd.DataFrame) -> str | None:
    return next((c for c in table.columns if c.lower() == "volume"), None)


def prices_from_table(table: pd.DataFrame, price: str, volume: str | None = None) -> pd.DataFrame:
    """A ``read_prices_csv`` table and the chosen columns -> prices frame."""
    close = table[price].to_numpy(float)
    if (close <= 0).any():
        row = int((close <= 0).nonzero()[0][0])
        raise DataError(f"Row {row + 1}, column {price}: {close[row]:g} is not a positive price, "
                        "so it has no return. Pick a price column, or remove that row.")
    vol = table[volume].to_numpy(float) if volume else np.full(len(table), np.nan)
    return pd.DataFrame({"date": table["date"].to_numpy(), "close": close, "volume": vol})


# --- Features, windows, split, scaling -----------------------------------------

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
                raise DataError("This data has no usable volume column: choose input features "
                                "without volume.")
            columns.append(np.log1p(volume))
        else:
            raise ValueError(f"unknown feature {name!r}")
    return np.stack(columns, axis=1)


def prepare(prices: pd.DataFrame, feature_names: tuple[str, ...], target: str, seq_len: int,
            val_pct: int, test_pct: int) -> Dataset:
    """prices -> windows (windows, seq_len, features) and next-day targets, split and scaled."""
    close = prices["close"].to_numpy(float)
    if len(close) < min_rows(seq_len):
        raise DataError(f"This data has {len(close)} trading days; sequence length {seq_len} needs "
                        f"at least {min_rows(seq_len)} to make {MIN_WINDOWS} windows to split. "
                        "Choose a longer date range or a shorter sequence length.")
    if not np.isfinite(close).all() or (close <= 0).any():
        raise DataError("Every close must be a positive number to compute returns.")
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


# --- From a TrainConfig --------------------------------------------------------

@dataclass(frozen=True)
class Upload:
    """A learner's price file, read: its table, its file name, the column that holds the price."""

    table: pd.DataFrame
    name: str
    price_column: str
    digest: str  # of the file's bytes: with the column, says which data a result was trained on


def load_prices(config: TrainConfig, upload: Upload | None = None) -> tuple[pd.DataFrame, str]:
    """The prices a TrainConfig names -> (prices frame, what to call them). Raises DataError."""
    if config.source == "stocks":
        return (load_stock(config.ticker, config.start_year, config.end_year),
                f"{config.ticker.upper()} daily close, {config.start_year}-{config.end_year}")
    if config.source == "synthetic":
        return (synthetic_prices(config.series, config.seed),
                f"{TRAIN_LABELS[config.series]}, seed {config.seed}")
    if upload is None:
        raise DataError("No file yet: upload a CSV with a date column and a price column.")
    volume = volume_column(upload.table)
    prices = prices_from_table(upload.table, upload.price_column,
                               volume if volume != upload.price_column else None)
    return prices, f"{upload.name}, column {upload.price_column}"


def dataset_key(config: TrainConfig, upload: Upload | None = None) -> tuple:
    """What ``load_dataset`` reads of a config and an upload: equal keys, equal data sets.

    The model's size, cell, epochs and learning rate are not in it: moving those
    reuses the data set (and its chart) as it is.
    """
    where = {"stocks": (config.ticker, config.start_year, config.end_year),
             "synthetic": (config.series, config.seed),
             "upload": upload and (upload.digest, upload.price_column)}[config.source]
    return (config.source, where, config.features, config.target, config.seq_len,
            config.val_pct, config.test_pct)


def load_dataset(config: TrainConfig, upload: Upload | None = None) -> tuple[Dataset, str]:
    """Load the prices a TrainConfig names, then window, split and scale them as it says.

    -> (Dataset, what to call the data). Raises DataError with a message for the learner.
    """
    prices, name = load_prices(config, upload)
    return prepare(prices, config.feature_names, config.target, config.seq_len,
                   config.val_pct, config.test_pct), name
