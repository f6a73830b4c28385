"""3. The carried hidden state: the next batch's graph hangs on to this one's."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from stockdemo.config import BATCHES, LAB_CELL, LAB_T, LAB_TICKERS, SEED
from stockdemo.i18n import N_
from stockdemo.knobs import knob_fields
from stockdemo.lab.experiment import Broken, LabConfig, caught, mse, seeded_model, source
from stockdemo.lab.prices import FIRST_YEAR, daily_returns
from stockdemo.lab.saved import Snapshot, saved_in_graph, snapshot
from stockdemo.model import StockPredictor


@knob_fields((LAB_CELL, LAB_T, BATCHES, SEED))
class DetachConfig(LabConfig):
    """The hidden state carried across batches."""


def carry(h: torch.Tensor | tuple[torch.Tensor, ...]):
    return h  # the mistake: the next batch's graph hangs on to this one's


def carry_detached(h: torch.Tensor | tuple[torch.Tensor, ...]):
    # truncated backpropagation through time: the same numbers, no history
    return tuple(t.detach() for t in h) if isinstance(h, tuple) else h.detach()


class BatchRow(NamedTuple):
    batch: int  # 1-based
    nodes: int
    saved_bytes: int
    backward_ms: float


def stream_batches(seq_len: int, batches: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Three stocks read side by side, day after day, ``seq_len`` days a batch.

    -> per batch: x (3, seq_len, 1), y (3, 1) the day after the batch.
    """
    series = np.stack([daily_returns(t, FIRST_YEAR, 2012)[1][:seq_len * batches + 1]
                       for t in LAB_TICKERS])
    out = []
    for b in range(batches):
        days = series[:, b * seq_len:(b + 1) * seq_len]
        out.append((torch.from_numpy(days[:, :, None].copy()),
                    torch.from_numpy(series[:, (b + 1) * seq_len, None].copy())))
    return out


def read_on(model: StockPredictor, batches, carry_state, retain: bool,
            label: str) -> tuple[list[BatchRow], Snapshot]:
    """Train-style passes over consecutive batches, the hidden state carried between them.

    -> per batch: its graph's size and backward time; and the last batch's
    graph, as it stood before its backward().
    """
    rows, h, last = [], None, None
    for b, (x, y) in enumerate(batches, start=1):
        out, h = model.rnn(x, h)
        loss = mse(model.fc(out[:, -1]), y)
        if b == len(batches):
            last = snapshot(label, loss, model, x)
        saved = saved_in_graph(loss) if last is None else last.saved
        t0 = time.perf_counter()
        loss.backward(retain_graph=retain)
        rows.append(BatchRow(b, saved.nodes, saved.bytes, (time.perf_counter() - t0) * 1e3))
        h = carry_state(h)
    return rows, last


@dataclass(frozen=True)
class DetachResult(Broken):
    failed_at: int  # the batch whose backward raised
    retained: tuple[BatchRow, ...]  # retain_graph=True silences the error: the graph grows
    detached: tuple[BatchRow, ...]  # detach() each batch: every graph one batch long


def carried_state(config: DetachConfig) -> DetachResult:
    started = time.perf_counter()
    batches = stream_batches(config.lab_t, config.batches)
    model = seeded_model(config.lab_cell, 10, config.seed)
    h, error, failed_at = None, "", 0
    for b, (x, y) in enumerate(batches, start=1):
        out, h = model.rnn(x, carry(h))
        loss = mse(model.fc(out[:, -1]), y)
        message = caught(loss.backward)
        if message:
            error, failed_at = message, b
            break
    first_x, first_y = batches[0]
    out, _ = model.rnn(first_x)
    first = snapshot(N_("first batch"), mse(model.fc(out[:, -1]), first_y), model, first_x)
    model.zero_grad()
    retained, last = read_on(model, batches, carry, True, N_("last batch, carried"))
    model.zero_grad()
    detached, cut = read_on(model, batches, carry_detached, False, N_("last batch, detached"))
    return DetachResult(config, error, source(carry), source(carry_detached), first, last, cut,
                        True, time.perf_counter() - started, failed_at=failed_at,
                        retained=tuple(retained), detached=tuple(detached))


