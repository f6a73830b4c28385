"""The Lab: one batch of different lengths, and the mistakes a run-time graph makes possible.

Each experiment is a function of a small frozen config (its knobs declared in
``stockdemo/config.py``) that runs for real and returns a result dataclass:
the numbers, torch's own error message where the experiment breaks on
purpose, the graphs before and after (``Graph``, laid out by ``render.layout`` and
drawn by the page's interactive view), and how long the experiment took.

What autograd saved for backward is measured two ways that agree: with
``torch.autograd.graph.saved_tensors_hooks`` while the forward runs
(``count_saved``), and by reading every node's ``_saved_*`` attributes
afterwards (``saved_in_graph``), which also sees what ``backward()`` freed.
Bytes are counted once per storage: the memory the graph keeps alive.
"""

from __future__ import annotations

import inspect
import re
import time
import warnings
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from stockdemo import data
from stockdemo.config import (
    BATCHES,
    CUT,
    LAB_BATCH,
    LAB_CELL,
    LAB_HIDDEN,
    LAB_T,
    LAB_TICKER,
    LAB_TICKERS,
    LAB_YEAR,
    LONG_LEN,
    MAX_T,
    SEED,
    SHORT_LEN,
    WEEKS,
    Knob,
    KnobConfig,
    RunConfig,
    knob_fields,
)
from stockdemo.graph import POST as POST_ROLE
from stockdemo.graph import PRE as PRE_ROLE
from stockdemo.graph import STEP as STEP_ROLE
from stockdemo.graph import Graph, capture_graph, walk_grad_fns
from stockdemo.live import build
from stockdemo.model import StockPredictor

# Loop and packed predictions of the same windows agree to float32 rounding:
# at most 1.2e-7 apart over 72 batches (rnn, gru, lstm; 2001-2012; weeks and
# set lengths; 16 windows), measured by bench/bench_lab.py.
PACKED_TOLERANCE = 1e-6
BREAK_BATCH = 32  # windows per batch in the break-it experiments
FIRST_YEAR = 2007  # the break-it experiments read daily returns from here on
DAMPING = 0.9
TIMING_REPEATS = 21
COST_SEQ_LENS = (1, 2, 5, 10, 20, 50, 75, 100)
COST_CELLS = ("rnn", "gru", "lstm", "rnn_loop", "gru_loop", "lstm_loop")


# --- Configs -------------------------------------------------------------------

class LabConfig(KnobConfig):
    """A Lab experiment's config: its fields are its knobs (``knob_fields``)."""

    @classmethod
    def shown_knobs(cls, settings: Mapping[str, object]) -> tuple[Knob, ...]:
        """The knobs that change this experiment, given the current ``settings`` by name."""
        return cls.KNOBS


@knob_fields((LAB_TICKER, LAB_YEAR, WEEKS, CUT, SHORT_LEN, LONG_LEN, LAB_CELL, SEED))
class LengthsConfig(LabConfig):
    @classmethod
    def shown_knobs(cls, settings: Mapping[str, object]) -> tuple[Knob, ...]:
        """Calendar weeks set their own lengths: the two length knobs only count for "set"."""
        if settings.get(CUT.name, CUT.default) == "set":
            return cls.KNOBS
        return tuple(k for k in cls.KNOBS if k not in (SHORT_LEN, LONG_LEN))


@knob_fields((LAB_CELL, LAB_T, SEED))
class BreakConfig(LabConfig):
    """Backward twice and the NaN: a cell, a window length, a seed."""


@knob_fields((LAB_T, SEED))
class InPlaceConfig(LabConfig):
    """The in-place change runs a for-loop over ``nn.RNNCell``: no cell to choose."""


@knob_fields((LAB_CELL, LAB_T, BATCHES, SEED))
class DetachConfig(LabConfig):
    """The hidden state carried across batches."""


@knob_fields((LAB_CELL, LAB_T, LAB_BATCH, SEED))
class NoGradConfig(LabConfig):
    """Recording, no_grad and inference_mode."""


@knob_fields((LAB_HIDDEN, LAB_BATCH, MAX_T, SEED))
class CostConfig(LabConfig):
    """The memory sweep over T, for every cell."""


# --- Measuring what autograd keeps -----------------------------------------------

class Saved(NamedTuple):
    """What a graph holds for backward. ``bytes`` counts each storage once."""

    nodes: int
    tensors: int
    bytes: int
    freed: int  # saved tensors backward() already released
    modified: int = 0  # saved tensors changed in place since: backward would refuse them


def saved_in_graph(output: torch.Tensor) -> Saved:
    """Walk every node behind ``output`` and read its saved tensors (``_saved_*``).

    A saved tensor that ``backward()`` freed, or that was changed in place
    since, raises on access with torch's reason; it is counted by that reason.
    """
    if output.grad_fn is None:
        return Saved(0, 0, 0, 0)
    order, _ = walk_grad_fns(output.grad_fn)
    storages: dict[int, int] = {}
    tensors = freed = modified = 0
    for fn in order:
        for name in _saved_names(type(fn)):
            try:
                value = getattr(fn, name)
            except RuntimeError as error:
                if "inplace operation" in str(error):
                    modified += 1
                else:
                    freed += 1
                continue
            for t in value if isinstance(value, tuple | list) else (value,):
                if isinstance(t, torch.Tensor):
                    tensors += 1
                    storage = t.untyped_storage()
                    storages[storage.data_ptr()] = storage.nbytes()
    return Saved(len(order), tensors, sum(storages.values()), freed, modified)


@lru_cache(maxsize=256)
def _saved_names(node_type: type) -> tuple[str, ...]:
    """The ``_saved_*`` attributes of one kind of node (dir() per node was most of a walk)."""
    return tuple(name for name in dir(node_type) if name.startswith("_saved_"))


def count_saved(forward: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, Saved]:
    """Run ``forward`` with a hook on every tensor autograd saves -> (its output, the tally)."""
    storages: dict[int, int] = {}
    count = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal count
        count += 1
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = forward()
    nodes = len(walk_grad_fns(output.grad_fn)[0]) if output.grad_fn is not None else 0
    return output, Saved(nodes, count, sum(storages.values()), 0)


@dataclass(frozen=True)
class Snapshot:
    """One moment of an experiment: the graph behind a tensor, and what it holds."""

    label: str
    saved: Saved
    graph: Graph | None  # None where nothing is drawn


def snapshot(label: str, output: torch.Tensor, model: nn.Module | None = None,
             inputs: torch.Tensor | None = None, draw: bool = True) -> Snapshot:
    graph = capture_graph(output, model, inputs) if draw and output.grad_fn is not None else None
    return Snapshot(label, saved_in_graph(output), graph and restep(graph))


def restep(graph: Graph) -> Graph:
    """Split each batch's steps apart in a graph that spans several batches.

    ``capture_graph`` places steps from the stack of a layer's outputs; a
    batch whose only output kept is ``h_n`` has a stack of one, so all its
    steps land in one block. Every batch repeats the op sequence of one step
    of a fully placed batch: matched from the batch's end, those ops become
    its steps, the rest its set-up. Ids stay as captured.
    """
    ops = [n for n in graph.op_nodes if n.layer is not None]
    layers = sorted({n.layer for n in ops})
    template = None
    for layer in layers:
        first = [n.op for n in ops if n.layer == layer and n.role == STEP_ROLE and n.step == 1]
        if first:
            template = first
            break
    if template is None:
        return graph
    k = len(template)
    placed: dict[str, tuple[int | None, str]] = {}
    for layer in layers:
        body = [n for n in ops if n.layer == layer and n.role != POST_ROLE]
        names = [n.op for n in body]
        steps = 0
        while len(names) >= (steps + 1) * k and names[len(names) - (steps + 1) * k:
                                                      len(names) - steps * k] == template:
            steps += 1
        pre = len(body) - steps * k
        for i, n in enumerate(body):
            placed[n.id] = (None, PRE_ROLE) if i < pre else ((i - pre) // k, STEP_ROLE)
    nodes = tuple(n._replace(step=placed[n.id][0], role=placed[n.id][1]) if n.id in placed else n
                  for n in graph.nodes)
    steps_seen = [step for step, role in placed.values() if role == STEP_ROLE]
    meta = {**graph.meta, "seq_len": max(steps_seen, default=0) + 1}
    return Graph(nodes, graph.edges, meta)


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


def caught(action: Callable[[], object]) -> str | None:
    """torch's own message if ``action`` raises a RuntimeError, else None."""
    try:
        action()
    except RuntimeError as error:
        return str(error)
    return None


def source(function: Callable) -> str:
    """The code a learner sees is the code that ran."""
    return inspect.getsource(function).strip()


# --- Real prices -------------------------------------------------------------------

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


def seeded_model(cell: str, hidden: int, seed: int) -> StockPredictor:
    """The Playground's StockPredictor for one feature a day (its return), built from ``seed``."""
    _, model = build(RunConfig(seq_len=1, batch_size=1, input_size=1, hidden_size=hidden,
                               cell=cell, seed=seed))
    return model


def mse(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return ((predictions - targets) ** 2).mean()


# --- 1. Different lengths in one batch -----------------------------------------------

class Window(NamedTuple):
    label: str  # e.g. "week of 2012-01-02"
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
            windows.append(Window(f"week of {start}", returns[monday == start]))
        return windows
    lengths = [config.long_len if i % 2 == 0 else config.short_len for i in range(config.weeks)]
    # from the year's first day, or earlier where the year (and 2013) hold too few days
    dates, returns = daily_returns(config.lab_ticker, LAB_YEAR.low, 2013)
    day = min(int(np.searchsorted(dates, np.datetime64(f"{config.lab_year}-01-01"))),
              len(dates) - sum(lengths))
    windows = []
    for length in lengths:
        first = str(dates[day].astype("datetime64[D]"))
        windows.append(Window(f"{length} days from {first}", returns[day:day + length]))
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
    labels: tuple[str, ...]
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
        labels=tuple(w.label for w in windows),
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


# --- 2. Break it on purpose ----------------------------------------------------------

@dataclass(frozen=True)
class Broken:
    """A mistake made on purpose: torch's message, the graph around it, and the fix."""

    config: BreakConfig | InPlaceConfig | DetachConfig | NoGradConfig
    error: str  # torch's own message
    mistake: str  # the code that made it (the very function that ran)
    fix: str
    before: Snapshot
    after: Snapshot
    fixed: Snapshot
    fix_ran: bool
    seconds: float


def backward_twice(loss: torch.Tensor) -> None:
    loss.backward()
    loss.backward()  # the saved tensors are gone: the first backward freed them


def backward_twice_retained(loss: torch.Tensor) -> None:
    loss.backward(retain_graph=True)  # keep the saved tensors for one more pass
    loss.backward()  # gradients add up: each .grad is now twice one pass's


@dataclass(frozen=True)
class TwiceResult(Broken):
    grad_ratio: float  # .grad after two passes over .grad after one (2 when it works)


def twice(config: BreakConfig) -> TwiceResult:
    started = time.perf_counter()
    model = seeded_model(config.lab_cell, 10, config.seed)
    x, y = price_windows(config.lab_t, BREAK_BATCH)
    loss = mse(model(x), y)
    before = snapshot("after forward", loss, model, x)
    error = caught(lambda: backward_twice(loss))
    after = snapshot("after the first backward()", loss, draw=False)
    once = model.fc.weight.grad.clone()
    model.zero_grad()
    loss = mse(model(x), y)
    loss.backward(retain_graph=True)
    fixed = snapshot("after backward(retain_graph=True)", loss, draw=False)
    model.zero_grad()
    fix_error = caught(lambda: backward_twice_retained(loss))
    ratio = float((model.fc.weight.grad / once).mean())
    return TwiceResult(config, error or "", source(backward_twice), source(backward_twice_retained),
                       before, after, fixed, fix_error is None, time.perf_counter() - started,
                       grad_ratio=ratio)


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
    first = snapshot("batch 1", mse(model.fc(out[:, -1]), first_y), model, first_x)
    model.zero_grad()
    retained, last = read_on(model, batches, carry, True, f"batch {config.batches}, carried")
    model.zero_grad()
    detached, cut = read_on(model, batches, carry_detached, False, f"batch {config.batches}, detached")
    return DetachResult(config, error, source(carry), source(carry_detached), first, last, cut,
                        True, time.perf_counter() - started, failed_at=failed_at,
                        retained=tuple(retained), detached=tuple(detached))


def damp_in_place(cell: nn.RNNCell, x: torch.Tensor) -> torch.Tensor:
    """x: (batch, T, 1) -> out (batch, T, hidden): every day's hidden state, like nn.RNN's."""
    h = x.new_zeros(x.shape[0], cell.hidden_size)
    outputs = []
    for x_t in x.unbind(1):
        h = cell(x_t, h)
        h.mul_(DAMPING)  # overwrites the tanh output that autograd saved for backward
        outputs.append(h)
    return torch.stack(outputs, dim=1)


def damp_out_of_place(cell: nn.RNNCell, x: torch.Tensor) -> torch.Tensor:
    """x: (batch, T, 1) -> out (batch, T, hidden): every day's hidden state, like nn.RNN's."""
    h = x.new_zeros(x.shape[0], cell.hidden_size)
    outputs = []
    for x_t in x.unbind(1):
        h = cell(x_t, h) * DAMPING  # a new tensor: the saved one stays as it was
        outputs.append(h)
    return torch.stack(outputs, dim=1)


@dataclass(frozen=True)
class InPlaceResult(Broken):
    version: int  # the first day's h._version after h.mul_(): autograd saved it at 0


def in_place(config: InPlaceConfig) -> InPlaceResult:
    """Damping the hidden state in place, in a for-loop over ``nn.RNNCell``."""
    started = time.perf_counter()
    model = seeded_model("rnn_loop", 10, config.seed)
    cell = model.rnn.cells[0]
    x, y = price_windows(config.lab_t, BREAK_BATCH)
    first_day = cell(x[:, 0], x.new_zeros(x.shape[0], cell.hidden_size))
    first_day.mul_(DAMPING)  # the loop's first step, alone, to read its version counter
    version = first_day._version
    out = damp_in_place(cell, x)
    loss = mse(model.fc(out[:, -1]), y)
    before = snapshot("damped in place", loss, model, x)
    error = caught(loss.backward)
    after = snapshot("after the failed backward()", loss, draw=False)
    loss = mse(model.fc(damp_out_of_place(cell, x)[:, -1]), y)
    fixed = snapshot("damped out of place", loss, model, x)
    fix_error = caught(loss.backward)
    return InPlaceResult(config, error or "", source(damp_in_place), source(damp_out_of_place),
                         before, after, fixed, fix_error is None, time.perf_counter() - started,
                         version=version)


def volatility(variance: torch.Tensor) -> torch.Tensor:
    """Predicted variance -> predicted size of tomorrow's move, 0 where the variance is not positive."""
    return torch.where(variance > 0, torch.sqrt(variance), 0.0)


def volatility_safe(variance: torch.Tensor) -> torch.Tensor:
    # torch.where picks values, not gradients: keep sqrt away from negatives too
    return torch.where(variance > 0, torch.sqrt(variance.clamp(min=1e-12)), 0.0)


class ForwardLine(NamedTuple):
    file: str
    line: int
    function: str
    code: str


@dataclass(frozen=True)
class NanResult(Broken):
    negative: int  # windows whose predicted variance was not positive
    loss: float  # finite: nothing in the forward pass looked wrong
    nan_grads: dict[str, int]  # parameter -> gradient entries that are NaN, without anomaly mode
    nan_after_step: int  # predictions that are NaN after one SGD step on those gradients
    traceback: str  # anomaly mode's "Traceback of forward call that caused the error"
    line: ForwardLine | None  # its last frame in this file: the line that made the NaN


def nan(config: BreakConfig) -> NanResult:
    started = time.perf_counter()
    model = seeded_model(config.lab_cell, 10, config.seed)
    x, y = price_windows(config.lab_t, BREAK_BATCH)
    target = y.abs()  # the size of tomorrow's move
    variance = model(x)
    loss = mse(volatility(variance), target)
    before = snapshot("forward: a finite loss", loss, model, x)
    broken_loss = float(loss.detach())
    loss.backward()
    nan_grads = {name: int(p.grad.isnan().sum()) for name, p in model.named_parameters()}
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.01 * p.grad
        nan_after_step = int(model(x).isnan().sum())

    model = seeded_model(config.lab_cell, 10, config.seed)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            loss = mse(volatility(model(x)), target)
            error = caught(loss.backward)
    after = snapshot("anomaly mode: backward stopped", loss, draw=False)
    traceback = next((str(w.message) for w in seen
                      if "Traceback of forward call" in str(w.message)), "")
    loss_fixed = mse(volatility_safe(model(x)), target)
    fixed = snapshot("sqrt kept away from negatives", loss_fixed, model, x)
    model.zero_grad()
    fix_error = caught(loss_fixed.backward)
    finite = all(bool(p.grad.isfinite().all()) for p in model.parameters())
    return NanResult(config, error or "", source(volatility), source(volatility_safe), before, after,
                     fixed, fix_error is None and finite, time.perf_counter() - started,
                     negative=int((variance <= 0).sum()), loss=broken_loss,
                     nan_grads=nan_grads, nan_after_step=nan_after_step, traceback=traceback,
                     line=forward_line(traceback))


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\n\s*(?P<code>.+)')


def forward_line(traceback: str, file: str = __file__) -> ForwardLine | None:
    """The last frame of ``traceback`` in ``file``: where the forward pass made the failing node."""
    frames = [m for m in _FRAME.finditer(traceback) if m["file"] == file]
    if not frames:
        return None
    last = frames[-1]
    return ForwardLine(last["file"], int(last["line"]), last["function"], last["code"].strip())


def loss_under_no_grad(model: StockPredictor, x: torch.Tensor, y: torch.Tensor) -> None:
    with torch.no_grad():
        loss = mse(model(x), y)
    loss.backward()  # nothing was recorded: there is no graph to go back through


def head_on_inference_features(model: StockPredictor, x: torch.Tensor, y: torch.Tensor) -> None:
    with torch.inference_mode():
        features = model.rnn(x)[0][:, -1]  # inference tensors: no version counter, no graph
    mse(model.fc(features), y).backward()  # fc must save its input for backward: refused


def head_on_cloned_features(model: StockPredictor, x: torch.Tensor, y: torch.Tensor) -> None:
    with torch.inference_mode():
        features = model.rnn(x)[0][:, -1]
    mse(model.fc(features.clone()), y).backward()  # clone(): a normal tensor autograd may save


class ModeRow(NamedTuple):
    mode: str
    median_ms: float
    nodes: int
    saved_bytes: int
    requires_grad: bool


MODES = ("grad recorded", "torch.no_grad()", "torch.inference_mode()")


@dataclass(frozen=True)
class NoGradResult(Broken):
    rows: tuple[ModeRow, ...]
    inference_error: str  # the second mistake: inference tensors in a graph

    @property
    def speedup(self) -> float:
        return self.rows[0].median_ms / max(self.rows[1].median_ms, 1e-9)


def _contexts():
    return {MODES[0]: torch.enable_grad, MODES[1]: torch.no_grad, MODES[2]: torch.inference_mode}


def no_grad(config: NoGradConfig) -> NoGradResult:
    started = time.perf_counter()
    model = seeded_model(config.lab_cell, 10, config.seed)
    x, y = price_windows(config.lab_t, config.lab_batch)
    def forward(context) -> torch.Tensor:
        with context():
            return model(x)

    contexts = _contexts()
    times: dict[str, list[float]] = {mode: [] for mode in contexts}
    for _ in range(TIMING_REPEATS):  # the modes take turns: a busy moment slows all three
        for mode, context in contexts.items():
            t0 = time.perf_counter()
            forward(context)
            times[mode].append(time.perf_counter() - t0)
    rows = []
    for mode, context in contexts.items():
        out, saved = count_saved(lambda context=context: forward(context))
        rows.append(ModeRow(mode, float(np.median(times[mode])) * 1e3, saved.nodes, saved.bytes,
                            out.requires_grad))
    with torch.enable_grad():
        recorded = model(x)
    before = snapshot(MODES[0], recorded, model, x)
    with torch.no_grad():
        after = snapshot(MODES[1], model(x), draw=False)
    error = caught(lambda: loss_under_no_grad(model, x, y))
    inference_error = caught(lambda: head_on_inference_features(model, x, y))
    fix_error = caught(lambda: head_on_cloned_features(model, x, y))
    with torch.inference_mode():
        features = model.rnn(x)[0][:, -1]
    fixed = snapshot("head on cloned features", mse(model.fc(features.clone()), y), model)
    return NoGradResult(config, error or "", source(head_on_inference_features),
                        source(head_on_cloned_features), before, after, fixed,
                        fix_error is None, time.perf_counter() - started, rows=tuple(rows),
                        inference_error=inference_error or "")


# --- 3. What the graph costs ------------------------------------------------------------

class CostRow(NamedTuple):
    cell: str
    seq_len: int
    nodes: int
    saved_tensors: int
    saved_bytes: int


@dataclass(frozen=True)
class CostResult:
    config: CostConfig
    rows: tuple[CostRow, ...]
    seconds: float

    def per_step(self, cell: str) -> tuple[float, float]:
        """-> (nodes, saved bytes) one more time step adds, between the two longest T."""
        a, b = [r for r in self.rows if r.cell == cell][-2:]
        steps = b.seq_len - a.seq_len
        return (b.nodes - a.nodes) / steps, (b.saved_bytes - a.saved_bytes) / steps


def cost_seq_lens(max_t: int) -> tuple[int, ...]:
    return tuple(sorted({t for t in COST_SEQ_LENS if t < max_t} | {max_t}))


def graph_cost(config: CostConfig) -> CostResult:
    """Saved bytes and nodes against T for every cell, each measured by running it."""
    started = time.perf_counter()
    generator = torch.Generator().manual_seed(config.seed)
    longest = torch.randn(config.lab_batch, config.max_t, 1, generator=generator)
    rows = []
    for cell in COST_CELLS:
        model = seeded_model(cell, config.lab_hidden, config.seed)
        for seq_len in cost_seq_lens(config.max_t):
            x = longest[:, :seq_len].clone()  # its own storage: a view would hold all of T
            _, saved = count_saved(lambda x=x, model=model: model(x))
            rows.append(CostRow(cell, seq_len, saved.nodes, saved.tensors, saved.bytes))
    return CostResult(config, tuple(rows), time.perf_counter() - started)


# The Lab's experiments in page order: URL label -> (config class, experiment).
EXPERIMENTS: dict[str, tuple[type[LabConfig], Callable]] = {
    "Different lengths": (LengthsConfig, different_lengths),
    "Backward twice": (BreakConfig, twice),
    "Carried hidden state": (DetachConfig, carried_state),
    "In-place change": (InPlaceConfig, in_place),
    "NaN": (BreakConfig, nan),
    "no_grad": (NoGradConfig, no_grad),
    "What the graph costs": (CostConfig, graph_cost),
}

# Every knob of the Lab once, in page order: what a link to the page may set.
KNOBS: tuple[Knob, ...] = tuple(dict.fromkeys(
    knob for config, _ in EXPERIMENTS.values() for knob in config.KNOBS))
