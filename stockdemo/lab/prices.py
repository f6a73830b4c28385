"""Real prices for the Lab: daily returns of the bundled closes, and windows of them."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from stockdemo.train import prices as data

FIRST_YEAR = 2007  # the break-it experiments read daily returns from here on


@lru_cache(maxsize=8)
def daily_returns(ticker: str, start_year: int, end_year: int) -> tuple[np.ndarray, np.ndarray]:
    """-> (dates (days,) datetime64, returns (days,) float32 in %) of the bundled closes.

    A day's return is 100 · log(close / previous close); the year before
    ``start_year`` is read too, so the first day has a previous close.
    """
    prices = data.load_stock(ticker, max(2000, start_year - 1), end_year)
    close = prices["close"].to_numpy(float)
    returns = (100 * np.log(close[1:] / close[:-1])).astype(np.float32)
    dates = prices["date"].to_numpy()[1:]
    keep = dates >= np.datetime64(f"{start_year}-01-01")
    return dates[keep], returns[keep]


def price_windows(seq_len: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` consecutive windows of AAPL's daily returns from 2007.

    They overlap where 2007-2012 holds fewer than ``count`` x ``seq_len`` days.
    -> x (count, seq_len, 1), y (count, 1): the return of the day after each window.
    """
    _, returns = daily_returns("aapl", FIRST_YEAR, 2012)
    stride = max(1, min(seq_len, (len(returns) - seq_len - 1) // max(count - 1, 1)))
    starts = np.arange(count) * stride
    x = np.stack([returns[s:s + seq_len] for s in starts])
    y = returns[starts + seq_len]
    return torch.from_numpy(x[:, :, None].copy()), torch.from_numpy(y[:, None].copy())


