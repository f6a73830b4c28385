"""Data sources, upload parsing, windows, the split by time, and scaling without leakage."""

import hashlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.uploads import BAD_FILES
from stockdemo.config import TrainConfig
from stockdemo.train import prices as data
from stockdemo.train import windows
from stockdemo.train.prices import read_prices_csv
from stockdemo.train.windows import DataError

BUNDLED_SHA256 = "5abadf99b2d394f920120a27de6f0df129859d71d4cfb0bf661bcc99446ab1fd"
EXPORT = (b"Date,Open,High,Low,Close,Adj Close,Volume\n"
          b"2013-02-26,443.82,451.54,437.66,448.97,61.0,17061400\n"
          b"2013-02-27,448.43,452.44,440.65,444.57,60.4,21014900\n"
          b"2013-02-28,444.05,447.87,441.40,441.40,60.0,11521100\n"
          b"2013-03-01,438.00,438.18,429.98,430.47,58.5,19730300\n")


def csv_rows(n: int, start: str = "2012-01-02") -> bytes:
    dates = pd.bdate_range(start, periods=n)
    lines = ["Date,Close"] + [f"{d:%Y-%m-%d},{100 + i % 7}.5" for i, d in enumerate(dates)]
    return "\n".join(lines).encode()


def test_bundled_file_is_the_published_one():
    assert hashlib.sha256(data.BUNDLED.read_bytes()).hexdigest() == BUNDLED_SHA256


def test_load_stock_keeps_the_years_asked_for_oldest_first():
    prices = data.load_stock("ibm", 2011, 2012)
    assert list(prices.columns) == ["date", "close", "volume"]
    assert prices["date"].dt.year.min() == 2011 and prices["date"].dt.year.max() == 2012
    assert prices["date"].is_monotonic_increasing
    assert len(prices) > 490


def test_load_stock_outside_the_data_says_which_years_exist():
    with pytest.raises(DataError, match="FB starts in May 2012"):
        data.load_stock("fb", 2000, 2005)


@pytest.mark.parametrize("series", ["noise", "walk", "gbm", "sine"])
def test_synthetic_series_are_seeded_and_positive(series):
    a, b = data.synthetic_prices(series, 3), data.synthetic_prices(series, 3)
    other = data.synthetic_prices(series, 4)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["close"], other["close"])
    assert (a["close"] > 0).all()


def test_typical_export_is_read_as_it_is():
    table = read_prices_csv(EXPORT)
    assert list(table.columns) == ["date", "Open", "High", "Low", "Close", "Adj Close", "Volume"]
    assert table["date"].iloc[0] == pd.Timestamp("2013-02-26")
    assert data.price_columns(table)[0] == "Close"
    assert data.volume_column(table) == "Volume"
    prices = data.prices_from_table(table, "Close", "Volume")
    assert prices["close"].tolist() == [448.97, 444.57, 441.40, 430.47]


def test_semicolon_file_with_bom_and_other_names_is_read():
    table = read_prices_csv("\ufeffday;price\n2020-01-02;10\n2020-01-03;11\n".encode("utf-8"))
    assert list(table.columns) == ["date", "price"]
    assert table["price"].tolist() == [10.0, 11.0]


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_every_bad_upload_raises_data_error_with_a_fix(case):
    content, message = BAD_FILES[case]
    with pytest.raises(DataError, match=message):
        read_prices_csv(content)


def test_too_few_rows_for_the_sequence_length_is_refused():
    content = csv_rows(60)
    assert len(read_prices_csv(content, min_rows=data.min_rows(5))) == 60
    with pytest.raises(DataError, match="at least 84 .*shorter sequence length"):
        read_prices_csv(content, min_rows=data.min_rows(40))


def test_a_file_just_under_the_limit_is_accepted():
    content = csv_rows(3) + b"\n" * (data.MAX_UPLOAD_BYTES - len(csv_rows(3)))
    assert len(read_prices_csv(content)) == 3


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_give_a_table_or_a_data_error(content):
    try:
        table = read_prices_csv(content)
    except DataError:
        return
    assert "date" in table.columns and len(table.columns) > 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["Date", "Close", "2020-01-02", "1.5", "", "nan", "-inf", "x", ",",
                                 ";", "\n", "\"", "2020-13-45", "1e309"]), max_size=40))
def test_csv_like_text_gives_a_table_or_a_data_error(parts):
    try:
        read_prices_csv("".join(parts).encode())
    except DataError:
        pass


def test_non_positive_price_column_is_refused_when_picked():
    table = read_prices_csv(b"Date,Close,Change\n2020-01-02,10,0\n2020-01-03,11,1\n")
    with pytest.raises(DataError, match="not a positive price"):
        data.prices_from_table(table, "Change")


# --- Windows, split, scaling --------------------------------------------------------

def prepared(prices, **kw):
    args = dict(feature_names=("return", "close", "ma"), target="return", seq_len=5,
                val_pct=15, test_pct=15)
    args.update(kw)
    return windows.prepare(prices, **args)


def test_windows_read_seq_len_days_and_predict_the_next():
    prices = data.synthetic_prices("gbm", 0, days=200)
    ds = prepared(prices)
    close = prices["close"].to_numpy()
    assert ds.x.shape == (200 - windows.WARMUP - 5, 5, 3)
    returns = np.log(close[1:] / close[:-1])  # return of day k+1 at k
    for i in (0, 17, len(ds.y) - 1):
        day = ds.target_day[i]
        assert day == i + 5
        unscaled = ds.x[i, :, 0] * ds.feature_std[0] + ds.feature_mean[0]
        first = i + windows.WARMUP - 1
        np.testing.assert_allclose(unscaled, returns[first: first + 5], rtol=1e-5)
        target = ds.y[i] * ds.target_std + ds.target_mean
        np.testing.assert_allclose(target, returns[day + windows.WARMUP - 1], rtol=1e-4)


def test_split_follows_time_without_overlap():
    ds = prepared(data.synthetic_prices("sine", 1))
    days = {p: ds.target_day[ds.part(p)] for p in ("train", "val", "test")}
    assert days["train"].max() < days["val"].min() and days["val"].max() < days["test"].min()
    assert ds.n_train + ds.n_val + ds.n_test == len(ds.y)
    assert ds.n_test == round(len(ds.y) * 0.15)


def test_changing_test_period_prices_changes_no_scaling_statistic_or_training_input():
    prices = data.synthetic_prices("gbm", 2)
    ds = prepared(prices, feature_names=("return", "close", "ma", "volume"))
    first_test_day = ds.target_day[ds.part("test")][0] + windows.WARMUP  # row in prices
    changed = prices.copy()
    changed.loc[first_test_day:, "close"] *= 3.0
    changed.loc[first_test_day:, "volume"] *= 10.0
    after = prepared(changed, feature_names=("return", "close", "ma", "volume"))
    np.testing.assert_array_equal(after.feature_mean, ds.feature_mean)
    np.testing.assert_array_equal(after.feature_std, ds.feature_std)
    assert (after.target_mean, after.target_std) == (ds.target_mean, ds.target_std)
    np.testing.assert_array_equal(after.x[ds.part("train")], ds.x[ds.part("train")])
    np.testing.assert_array_equal(after.y[ds.part("train")], ds.y[ds.part("train")])
    assert not np.array_equal(after.x[ds.part("test")], ds.x[ds.part("test")])


def test_changing_a_training_price_does_change_the_scaling():
    """The control for the leakage test: the statistics do depend on training days."""
    prices = data.synthetic_prices("gbm", 2)
    changed = prices.copy()
    changed.loc[10, "close"] *= 3.0
    assert not np.array_equal(prepared(changed).feature_mean, prepared(prices).feature_mean)


def test_price_target_is_the_next_close():
    prices = data.synthetic_prices("walk", 5, days=120)
    ds = prepared(prices, target="price")
    np.testing.assert_allclose(ds.y * ds.target_std + ds.target_mean,
                               ds.next_close(slice(None)), rtol=1e-5)


def test_too_short_a_history_is_a_data_error():
    prices = data.synthetic_prices("gbm", 0, days=data.min_rows(20) - 1)
    with pytest.raises(DataError, match="shorter sequence length"):
        prepared(prices, seq_len=20)
    assert len(prepared(prices, seq_len=19).y) == windows.MIN_WINDOWS


def test_volume_feature_without_volume_is_a_data_error():
    table = read_prices_csv(csv_rows(80))
    prices = data.prices_from_table(table, "Close")
    with pytest.raises(DataError, match="without volume"):
        prepared(prices, feature_names=("return", "volume"))


def test_dataset_key_changes_with_what_the_data_set_reads_and_only_that():
    base = TrainConfig()
    key = data.dataset_key(base)
    for model_only in ({"hidden_size": 64}, {"num_layers": 3}, {"cell": "gru"}, {"epochs": 5},
                       {"lr": "0.001"}, {"seed": 7}):
        assert data.dataset_key(base.replace(**model_only)) == key, model_only
    for data_change in ({"seq_len": 6}, {"ticker": "ibm"}, {"start_year": 2011}, {"features": "return"},
                        {"target": "price"}, {"val_pct": 20}, {"test_pct": 20}, {"source": "synthetic"}):
        assert data.dataset_key(base.replace(**data_change)) != key, data_change
    synthetic = base.replace(source="synthetic")
    assert data.dataset_key(synthetic.replace(seed=7)) != data.dataset_key(synthetic)
