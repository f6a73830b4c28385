"""One live run: seed, draw the input, build the model, run it, record its graph.

The order is the seed snippet's: ``torch.manual_seed``, ``torch.randn``, then
the model, so ``run(RunConfig(seed=s))`` gives the numbers the snippet gives
by hand after ``torch.manual_seed(s)`` (the code for that: stockdemo/live/reproduce.py).
The run is recorded like any other (``stockdemo.graph.capture.record_steps``: the record,
tagged with its steps and layers); ``recorded`` records it again, with its lines and a replay.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import torch

from stockdemo.cells import recurrent_layer
from stockdemo.config import RunConfig
from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph, record_steps
from stockdemo.graph.lines import LineRecorder, is_callers_file
from stockdemo.model import StockPredictor, count_parameters

# torch.manual_seed is process-wide: concurrent sessions would race on it
# between seeding and the last random draw, breaking "same seed, same numbers".
_SEED_LOCK = threading.Lock()

SWEEP_SEQ_LENS = (1, 2, 5, 10, 20, 50, 100, 200)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class RunResult:
    config: RunConfig
    inputs: torch.Tensor  # (batch, seq_len, features)
    predictions: torch.Tensor  # (batch, 1), detached
    model: StockPredictor
    graph: Graph
    timings_ms: dict[str, float]  # stage -> milliseconds

    @property
    def parameter_count(self) -> int:
        return count_parameters(self.model)


def build(config: RunConfig) -> tuple[torch.Tensor, StockPredictor]:
    """Seeded input and model, in the seed snippet's order.

    -> input (batch, seq_len, features), model
    """
    with _SEED_LOCK:
        # What torch.manual_seed does on a CPU-only build, minus its calls into
        # the CUDA/XPU/MTIA seeders, which each record a stack trace.
        torch.default_generator.manual_seed(config.seed)
        x = torch.randn(config.batch_size, config.seq_len, config.input_size)
        model = StockPredictor(config.input_size, config.hidden_size, config.num_layers, 1,
                               rnn=recurrent_layer(config.cell))
    return x, model


def run(config: RunConfig) -> RunResult:
    """Build the model, run it live, and record the autograd graph it made."""
    t0 = time.perf_counter()
    x, model = build(config)
    t1 = time.perf_counter()
    with torch.enable_grad():
        output = model(x)  # (batch, 1)
    t2 = time.perf_counter()
    graph = capture_graph(output, model, x)
    t3 = time.perf_counter()
    return RunResult(
        config=config,
        inputs=x,
        predictions=output.detach(),
        model=model,
        graph=graph,
        timings_ms={
            "build": (t1 - t0) * 1e3,
            "forward": (t2 - t1) * 1e3,
            "capture": (t3 - t2) * 1e3,
        },
    )


def in_stockdemo(filename: str) -> bool:
    """A frame of stockdemo's own code (the model's forward, a training step's loss), not of the
    recorder's: where the replay's code panel points."""
    return filename.startswith(_PACKAGE) and is_callers_file(filename)


def recorded(config: RunConfig, replay: bool = False) -> dict:
    """``config``'s run again (same seed, so the same graph as ``run(config)``'s): its record
    (``record_steps``). ``replay``: with each node's line in stockdemo's code and a real
    backward of ``output.sum()``."""
    x, model = build(config)
    # Which line, not which iteration: the tags say the step.
    lines = LineRecorder(in_stockdemo, loops=False) if replay else None
    with torch.enable_grad(), lines or contextlib.nullcontext():
        output = model(x)  # (batch, 1)
    return record_steps(output, model, x, lines, replay=replay)


@lru_cache(maxsize=16)
def printed(config: RunConfig) -> str:
    """What ``print(predictions)`` shows for this run, grad_fn included (Home, the lesson).

    Its own run of the same seeded model, not part of ``run``: a tensor's repr
    would cost every Playground move.
    """
    x, model = build(config)
    with torch.enable_grad():
        return str(model(x))


def size_sweep(config: RunConfig, seq_lens: tuple[int, ...] = SWEEP_SEQ_LENS) -> list[dict[str, int]]:
    """Graph size against T for this cell and layer count, measured by running.

    The graph's node and edge counts depend on the cell, the layer count and T,
    not on the hidden size, batch or features, so the sweep runs small
    (batch 1, hidden 4) to stay fast. -> [{"seq_len", "nodes", "edges"}, ...]
    """
    rows = []
    for seq_len in seq_lens:
        small = config.replace(seq_len=seq_len, batch_size=1, hidden_size=4, input_size=1)
        x, model = build(small)
        stats = capture_graph(model(x), model, x).stats
        rows.append({"seq_len": seq_len, "nodes": stats["nodes"], "edges": stats["edges"]})
    return rows
