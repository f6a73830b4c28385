"""Where prices come from: the bundled daily prices, a seeded synthetic series, or a CSV.

Each source gives a *prices* frame (one row per trading day, oldest first: ``date``,
``close``, ``volume``) that stockdemo/train/windows.py turns into model-ready windows. An
uploaded file is untrusted: ``read_prices_csv`` checks it and raises only
``DataError``, with a fix in its message. ``load_dataset`` does both for a TrainConfig.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from stockdemo.config import TRAIN_LABELS, TrainConfig
from stockdemo.i18n import N_, Message, later, tr
from stockdemo.i18n import number as written
from stockdemo.train.windows import DataError, Dataset, prepare
from stockdemo.train.windows import min_rows as min_rows  # the rows an upload needs: its page asks here

BUNDLED = Path(__file__).resolve().parents[1] / "data" / "stocks.csv.gz"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # also server.maxUploadSize in .streamlit/config.toml
SYNTH_DAYS = 750  # about three years of trading days


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
        raise DataError(tr("{ticker} has no prices from {start} to {end}: widen the year range (FB starts "
                           "in May 2012, GOOG in August 2004).", ticker=ticker.upper(), start=str(start_year),
                           end=str(end_year)))
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
    b"PK\x03\x04": N_("a zip archive or an Excel .xlsx workbook"),
    b"\xd0\xcf\x11\xe0": N_("an old Excel .xls workbook"),
    b"\x1f\x8b": N_("a gzip archive"),
    b"%PDF": N_("a PDF document"),
    b"\x89PNG": N_("a PNG image"),
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
        raise DataError(tr("The file is {size} MB; the limit is {limit} MB. Keep only the date and price "
                           "columns or a shorter date range.", size=written(len(data) / 2**20, 1),
                           limit=MAX_UPLOAD_BYTES // 2**20))
    if not data.strip():
        raise DataError(tr("The file is empty. Export a CSV with a header line such as Date,Close and one "
                           "row per day."))
    text = _decode(data)
    if not text.strip():
        raise DataError(tr("The file has no text in it. Export a CSV with a header line such as Date,Close "
                           "and one row per day."))
    table = _parse_csv(text)
    if table.empty:
        raise DataError(tr("The file has a header ({columns}) but no rows of data.",
                           columns=", ".join(map(str, table.columns))))
    dates, date_col = _date_column(table)
    numeric = _numeric_columns(table.drop(columns=[date_col]))
    _check_dates(dates)
    if len(table) < min_rows:
        raise DataError(tr("The file has {rows} rows; training needs at least {needed} for this sequence "
                           "length (windows for training, validation and test). Upload a longer history "
                           "or choose a shorter sequence length.", rows=len(table), needed=min_rows))
    return pd.concat([pd.Series(dates, name="date"), numeric], axis=1)


def _decode(data: bytes) -> str:
    for magic, kind in _BINARY_MAGIC.items():
        if data.startswith(magic):
            raise DataError(tr("This looks like {kind}, not a CSV text file. Open it and save or export it "
                               "as CSV.", kind=tr(kind)))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(tr("The file is saved as UTF-16 text. Save it again as CSV UTF-8."))
    head = data[:4096]
    controls = sum(b < 9 or 13 < b < 32 for b in head)
    if b"\x00" in head or controls > len(head) // 100:
        raise DataError(tr("This looks like a binary file, not CSV text. Export your prices as CSV (a text "
                           "file with a header line such as Date,Close)."))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DataError(tr("The file is not UTF-8 text (byte 0x{byte} at position {position}). Save it "
                           "again as CSV UTF-8.", byte=f"{data[err.start]:02x}", position=str(err.start))
                        ) from None


def _parse_csv(text: str) -> pd.DataFrame:
    header = text.splitlines()[0]
    sep = max((",", ";", "\t"), key=header.count)
    try:
        table = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                            skipinitialspace=True)
    except Exception as err:  # noqa: BLE001 - untrusted text: any parser failure is the file's
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DataError(tr("The file could not be read as CSV ({error}). Check that every row has the same "
                           "number of comma-separated values as the header.", error=first)) from None
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
                raise DataError(tr("Row {row}: {value} in column {column} is not a date. Use dates like "
                                   "2013-03-01 in every row.", row=row + 1, value=repr(table[col].iloc[row]),
                                   column=col))
            return dates.reset_index(drop=True), col
    raise DataError(tr("No date column found. Add a column named Date with dates like 2013-03-01."))


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
            shown = repr(text.iloc[row]) if text.iloc[row] else tr("an empty cell")
            raise DataError(tr("Row {row}, column {column}: {value} is not a finite number (a gap, NaN or "
                               "infinity). Remove that row or fill it in, then upload again.", row=row + 1,
                               column=col, value=shown))
        numeric[col] = values.astype(float).reset_index(drop=True)
    if not numeric:
        raise DataError(tr("No numeric column found. The file needs a price column such as Close with "
                           "numbers like 130.31."))
    return pd.DataFrame(numeric)


def _check_dates(dates: pd.Series) -> None:
    values = dates.to_numpy()
    duplicated = dates.duplicated().to_numpy().nonzero()[0]
    if len(duplicated):
        row = int(duplicated[0])
        raise DataError(tr("The date {date} appears more than once (row {row}). Keep one row per day.",
                           date=f"{dates.iloc[row]:%Y-%m-%d}", row=row + 1))
    back = (values[1:] < values[:-1]).nonzero()[0]
    if len(back):
        row = int(back[0]) + 1
        raise DataError(tr("Dates must run oldest first: row {row} ({date}) comes after {before}. Sort the "
                           "file by date, oldest first.", row=row + 1, date=f"{dates.iloc[row]:%Y-%m-%d}",
                           before=f"{dates.iloc[row - 1]:%Y-%m-%d}"))


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
        raise DataError(tr("Row {row}, column {column}: {value} is not a positive price, so it has no "
                           "return. Pick a price column, or remove that row.", row=row + 1, column=price,
                           value=f"{close[row]:g}"))
    vol = table[volume].to_numpy(float) if volume else np.full(len(table), np.nan)
    return pd.DataFrame({"date": table["date"].to_numpy(), "close": close, "volume": vol})


# --- From a TrainConfig --------------------------------------------------------

@dataclass(frozen=True)
class Upload:
    """A learner's price file, read: its table, its file name, the column that holds the price."""

    table: pd.DataFrame
    name: str
    price_column: str
    digest: str  # of the file's bytes: with the column, says which data a result was trained on


def load_prices(config: TrainConfig, upload: Upload | None = None) -> tuple[pd.DataFrame, Message]:
    """The prices a TrainConfig names -> (prices frame, what to call them). Raises DataError.

    The name is a Message: the data set is cached for every session, each reads it in its language.
    """
    if config.source == "stocks":
        return (load_stock(config.ticker, config.start_year, config.end_year),
                later("{ticker} daily close, {start}-{end}", ticker=config.ticker.upper(),
                      start=str(config.start_year), end=str(config.end_year)))
    if config.source == "synthetic":
        return (synthetic_prices(config.series, config.seed),
                later("{series}, seed {seed}", series=later(TRAIN_LABELS[config.series]),
                      seed=str(config.seed)))
    if upload is None:
        raise DataError(tr("No file yet: upload a CSV with a date column and a price column."))
    volume = volume_column(upload.table)
    prices = prices_from_table(upload.table, upload.price_column,
                               volume if volume != upload.price_column else None)
    return prices, later("{file}, column {column}", file=upload.name, column=upload.price_column)


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


def load_dataset(config: TrainConfig, upload: Upload | None = None) -> tuple[Dataset, Message]:
    """Load the prices a TrainConfig names, then window, split and scale them as it says.

    -> (Dataset, what to call the data). Raises DataError with a message for the learner.
    """
    prices, name = load_prices(config, upload)
    return prepare(prices, config.feature_names, config.target, config.seq_len,
                   config.val_pct, config.test_pct), name
