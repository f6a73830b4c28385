"""1. Different lengths in one batch: one by one, packed, padded."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from stockdemo.config import CUT, LAB_CELL, LAB_TICKER, LAB_YEAR, LONG_LEN, SEED, SHORT_LEN, WEEKS
from stockdemo.graph import POST as POST_ROLE
from stockdemo.graph import PRE as PRE_ROLE
from stockdemo.graph import STEP as STEP_ROLE
from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph
from stockdemo.knobs import Knob, knob_fields
from stockdemo.lab.experiment import LabConfig, seeded_model
from stockdemo.lab.prices import daily_returns
from stockdemo.model import StockPredictor

# Loop and packed predictions of the same windows agree to float32 rounding; this
# leaves room above the largest gap seen (docs/decisions.md).
PACKED_TOLERANCE = 1e-6


@knob_fields((LAB_TICKER, LAB_YEAR, WEEKS, CUT, SHORT_LEN, LONG_LEN, LAB_CELL, SEED))
class LengthsConfig(LabConfig):
    @classmethod
    def shown_knobs(cls, settings: Mapping[str, object]) -> tuple[Knob, ...]:
        """Calendar weeks set their own lengths: the two length knobs only count for "set"."""
        if settings.get(CUT.name, CUT.default) == "set":
            return cls.KNOBS
        return tuple(k for k in cls.KNOBS if k not in (SHORT_LEN, LONG_LEN))


def restep_packed(graph: Graph) -> Graph:
    """Split a packed run's recorded ops into its time steps.

    A packed ``nn.RNN`` hands back only ``h_n``, so ``capture_graph`` sees one
    step. The steps show in the wiring: each step's recurrent matmul (an
    ``Addmm`` fed by ``W_hh.T``) reads the hidden state the step before made,
    through a ``Slice`` where the batch shrank. Each step ends at that hidden
    state; the last one at the last op of the same kind. Ops after it gather
    ``h_n`` (post).
    """
    if {n.layer for n in graph.op_nodes} - {0, None}:
        return graph
    by_id, preds = graph.by_id, graph.preds
    body = [n for n in graph.op_nodes if n.layer == 0 and n.role != POST_ROLE]

    def recurrent(src: str) -> bool:
        return by_id[src].label == "T" and any("weight_hh" in p for p in preds.get(src, ()))

    hidden: list[str] = []
    for n in body:
        srcs = preds.get(n.id, [])
        if n.op != "AddmmBackward0" or not any(recurrent(s) for s in srcs):
            continue
        for src in (s for s in srcs if by_id[s].kind == "op" and not recurrent(s)):
            while by_id[src].op == "SliceBackward0" and preds.get(src):
                src = preds[src][0]
            hidden.append(src)
    if not hidden:
        return graph
    index = {n.id: i for i, n in enumerate(body)}
    end_op = by_id[hidden[0]].op
    bounds = sorted({index[h] for h in hidden if h in index}
                    | {max(i for i, n in enumerate(body) if n.op == end_op)})
    # before the first step's Slice: the input projection, done for every step at once
    first = next((i for i, n in enumerate(body) if n.op == "SliceBackward0"), 0)
    placed = {n.id: ((None, PRE_ROLE) if i < first else (bisect_left(bounds, i), STEP_ROLE))
              if i <= bounds[-1] else (None, POST_ROLE) for i, n in enumerate(body)}
    nodes = tuple(n._replace(step=placed[n.id][0], role=placed[n.id][1]) if n.id in placed else n
                  for n in graph.nodes)
    return Graph(nodes, graph.edges, {**graph.meta, "seq_len": len(bounds)})


class Window(NamedTuple):
    first: str  # its first day, e.g. "2012-01-03"
    returns: np.ndarray  # (days,) float32


def cut_windows(config: LengthsConfig) -> list[Window]:
    """The batch's windows: calendar weeks of the year, or two lengths alternating."""
    dates, returns = daily_returns(config.lab_ticker, config.lab_year, config.lab_year)
    if config.cut == "weeks":
        days = dates.astype("datetime64[D]")
        # day 0 of numpy's calendar, 1970-01-01, was a Thursday: 3 days after a Monday
        monday = days - (days.view("int64") - 4) % 7
        windows = []
        for start in np.unique(monday)[:config.weeks]:
            days_of_week = monday == start
            windows.append(Window(str(dates[days_of_week][0].astype("datetime64[D]")), returns[days_of_week]))
        return windows
    lengths = [config.long_len if i % 2 == 0 else config.short_len for i in range(config.weeks)]
    # from the year's first day, or earlier where the year (and 2013) hold too few days
    dates, returns = daily_returns(config.lab_ticker, LAB_YEAR.low, 2013)
    day = min(int(np.searchsorted(dates, np.datetime64(f"{config.lab_year}-01-01"))),
              len(dates) - sum(lengths))
    windows = []
    for length in lengths:
        windows.append(Window(str(dates[day].astype("datetime64[D]")), returns[day:day + length]))
        day += length
    return windows


def predict_one_by_one(model: StockPredictor, windows: list[torch.Tensor]) -> list[torch.Tensor]:
    """Each window alone, at its own length: one graph per window."""
    return [model(w[None]) for w in windows]  # w: (days, 1) -> (1, 1)


def predict_packed(model: StockPredictor, padded: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """padded: (windows, longest, 1), lengths: (windows,) -> (windows, 1).

    Packing tells the RNN where each window ends; ``h_n`` then holds each
    window's hidden state after its own last day.
    """
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    _, h_n = model.rnn(packed)
    if isinstance(h_n, tuple):  # LSTM: (h_n, c_n)
        h_n = h_n[0]
    return model.fc(h_n[-1])


def predict_padded(model: StockPredictor, padded: torch.Tensor) -> torch.Tensor:
    """padded: (windows, longest, 1) -> (windows, 1): ``out[:, -1]`` reads the padding."""
    return model(padded)


@dataclass(frozen=True)
class LengthsResult:
    config: LengthsConfig
    firsts: tuple[str, ...]  # each window's first day
    lengths: tuple[int, ...]
    one_by_one: np.ndarray  # (windows,) each window run alone
    packed: np.ndarray  # (windows,)
    padded: np.ndarray  # (windows,)
    window_graphs: tuple[Graph, ...]  # one per window, each its own size
    packed_graph: Graph
    padded_graph: Graph
    batch_sizes: tuple[int, ...]  # packing: windows still running at each step
    sorted_indices: tuple[int, ...]  # packing: longest window first
    seconds: float

    @property
    def packed_gap(self) -> float:
        return float(np.abs(self.packed - self.one_by_one).max())

    @property
    def padded_gaps(self) -> np.ndarray:
        return np.abs(self.padded - self.one_by_one)

    @property
    def tolerance(self) -> float:
        return PACKED_TOLERANCE


def different_lengths(config: LengthsConfig) -> LengthsResult:
    started = time.perf_counter()
    windows = cut_windows(config)
    model = seeded_model(config.lab_cell, 10, config.seed)
    tensors = [torch.from_numpy(w.returns[:, None].copy()) for w in windows]
    lengths = torch.tensor([len(t) for t in tensors])
    alone = predict_one_by_one(model, tensors)
    graphs = tuple(capture_graph(p, model, t[None]) for p, t in zip(alone, tensors, strict=True))
    padded = pad_sequence(tensors, batch_first=True)  # zeros after each short window
    packed = predict_packed(model, padded, lengths)
    plain = predict_padded(model, padded)
    info = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    return LengthsResult(
        config=config,
        firsts=tuple(w.first for w in windows),
        lengths=tuple(int(n) for n in lengths),
        one_by_one=torch.cat(alone).detach().numpy()[:, 0],
        packed=packed.detach().numpy()[:, 0],
        padded=plain.detach().numpy()[:, 0],
        window_graphs=graphs,
        packed_graph=restep_packed(capture_graph(packed, model, padded)),
        padded_graph=capture_graph(plain, model, padded),
        batch_sizes=tuple(int(n) for n in info.batch_sizes),
        sorted_indices=tuple(int(i) for i in info.sorted_indices),
        seconds=time.perf_counter() - started,
    )


