"""One live run: seed, draw the input, build the model, run it, capture its graph.

The order is the seed snippet's: ``torch.manual_seed``, ``torch.randn``, then
the model, so ``run(RunConfig(seed=s))`` gives the numbers the snippet gives
by hand after ``torch.manual_seed(s)``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import torch

from stockdemo.config import CELL_LABELS, RunConfig
from stockdemo.graph import Graph, capture_graph
from stockdemo.model import StockPredictor, count_parameters

# torch.manual_seed is process-wide: concurrent sessions would race on it
# between seeding and the last random draw, breaking "same seed, same numbers".
_SEED_LOCK = threading.Lock()

SWEEP_SEQ_LENS = (1, 2, 5, 10, 20, 50, 100, 200)


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
        # the CUDA/XPU/MTIA seeders, which each record a stack trace (~1 ms).
        torch.default_generator.manual_seed(config.seed)
        x = torch.randn(config.batch_size, config.seq_len, config.input_size)
        model = StockPredictor(config.input_size, config.hidden_size, config.num_layers, 1,
                               cell=config.cell)
    return x, model


def run(config: RunConfig) -> RunResult:
    """Build the model, run it live, and capture the autograd graph it recorded."""
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


@lru_cache(maxsize=16)
def printed(config: RunConfig) -> str:
    """What ``print(predictions)`` shows for this run, grad_fn included (Home, the lesson).

    Its own run of the same seeded model, not part of ``run``: a tensor's repr
    took 2.5 ms of every Playground move under load.
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


_RECURRENT = {"rnn": "nn.RNN", "gru": "nn.GRU", "lstm": "nn.LSTM"}
_CELL = {"rnn": "nn.RNNCell", "gru": "nn.GRUCell", "lstm": "nn.LSTMCell"}

_LOOP_CLASS = '''

class LoopRNN(nn.Module):
    """{cell_label}: one Python call per time step, so autograd records every step."""

    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.hidden_size = hidden_size
        self.cells = nn.ModuleList(
            {cell_cls}(input_size if layer == 0 else hidden_size, hidden_size)
            for layer in range(num_layers)
        )

    def forward(self, x):
        batch = x.shape[0]
        for cell in self.cells:
            h = x.new_zeros(batch, self.hidden_size)
{c_init}            outputs = []
            for x_t in x.unbind(1):  # one time step at a time
{step}                outputs.append(h)
            x = torch.stack(outputs, dim=1)
        return x, h
'''


def reproduce_code(config: RunConfig) -> str:
    """Standalone PyTorch code that reproduces this run's predictions exactly."""
    c = config
    if c.is_loop:
        lstm = c.base_cell == "lstm"
        loop = _LOOP_CLASS.format(
            cell_label=CELL_LABELS[c.cell],
            cell_cls=_CELL[c.base_cell],
            c_init="            c = x.new_zeros(batch, self.hidden_size)\n" if lstm else "",
            step=("                h, c = cell(x_t, (h, c))\n" if lstm
                  else "                h = cell(x_t, h)\n"),
        )
        layer = "LoopRNN(input_dim, hidden_dim, num_layers)"
    else:
        loop = ""
        layer = f"{_RECURRENT[c.cell]}(input_dim, hidden_dim, num_layers, batch_first=True)"
    return f'''import torch
from torch import nn
{loop}

class StockPredictor(nn.Module):
    def __init__(self, input_dim, hidden_dim, num_layers, output_dim):
        super().__init__()
        self.rnn = {layer}
        self.fc = nn.Linear(hidden_dim, output_dim)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1, :])  # only the last time step matters


torch.manual_seed({c.seed})
input_data = torch.randn({c.batch_size}, {c.seq_len}, {c.input_size})  # batch, time steps, features
model = StockPredictor(input_dim={c.input_size}, hidden_dim={c.hidden_size},
                       num_layers={c.num_layers}, output_dim=1)
predictions = model(input_data)  # shape ({c.batch_size}, 1)
print(predictions)
'''

