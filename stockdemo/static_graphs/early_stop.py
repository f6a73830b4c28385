"""A model whose graph depends on the data: its loop stops once the hidden state grows large.

``EarlyStopRNN``'s ``if h.norm(dim=1).mean() > threshold: break`` looks at the values,
so eager mode records graphs of different lengths for different inputs (a calm one and
a volatile one); ``CondStopRNN`` is the ``torch.cond`` rewrite export asks for.
"""

from __future__ import annotations

import functools
import inspect
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from stockdemo.config import RunConfig
from stockdemo.graph import Graph
from stockdemo.graph.capture import capture_graph
from stockdemo.i18n import Message, later
from stockdemo.live.run import build

# Exporting the torch.cond rewrite traces two subgraphs per step, so it runs at a
# short length, said on the page.
COND_MAX_T = 3

# The calm input is the run's input scaled down, the volatile one scaled up,
# so the early-stop model keeps going on one and breaks out early on the other.
CALM_SCALE = 0.1
VOLATILE_SCALE = 3.0


class EarlyStopRNN(nn.Module):
    """A for-loop over ``nn.RNNCell`` that stops once the hidden state grows past a threshold.

    ``if h.norm(dim=1).mean() > threshold: break`` looks at the *values*, so
    how many steps run (and how long the autograd graph is) depends on the data.
    """

    def __init__(self, input_dim: int, hidden_dim: int, threshold: float, seed: int = 0):
        super().__init__()
        self.cell = nn.RNNCell(input_dim, hidden_dim)
        self.fc = nn.Linear(hidden_dim, 1)
        self.threshold = threshold
        # Own generator: reproducible without touching the process-wide seed.
        g = torch.Generator().manual_seed(seed)
        # Every parameter here has fan-in hidden_dim (the RNNCell's own rule, and
        # nn.Linear's bound for this fc): uniform in +-1/sqrt(hidden_dim).
        bound = 1 / math.sqrt(hidden_dim)
        with torch.no_grad():
            for p in self.parameters():
                p.uniform_(-bound, bound, generator=g)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (batch, seq_len, input_dim) -> (batch, 1)"""
        return self.run_steps(x)[0]

    def run_steps(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """x: (batch, seq_len, input_dim) -> ((batch, 1), time steps actually run)"""
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        outputs = []
        for t in range(x.shape[1]):
            h = self.cell(x[:, t, :], h)
            outputs.append(h)
            if h.norm(dim=1).mean() > self.threshold:
                break
        out = torch.stack(outputs, dim=1)  # (batch, steps run, hidden), as LoopRNN returns
        return self.fc(out[:, -1, :]), len(outputs)


class CondStopRNN(EarlyStopRNN):
    """The same early stop written with ``torch.cond``, the form export asks for.

    Both branches are traced; once the threshold is passed, every later step
    takes the branch that keeps ``h`` unchanged. The loop always runs T times.
    """

    def run_steps(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """x: (batch, seq_len, input_dim) -> ((batch, 1), time steps in the graph)"""
        h = x.new_zeros(x.shape[0], self.cell.hidden_size)
        for t in range(x.shape[1]):
            h = torch.cond(h.norm(dim=1).mean() > self.threshold,
                           _keep, _step(self.cell), (h, x[:, t, :]))
        return self.fc(h), x.shape[1]


def _keep(h: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
    """h: (batch, hidden), x_t: (batch, input_dim) -> h, copied (cond's branches may not alias)"""
    return h.clone()


def _step(cell: nn.RNNCell) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """One more step, with the operands in cond's order: (h, x_t) -> new h (batch, hidden)."""
    return lambda h, x_t: cell(x_t, h)


@dataclass(frozen=True)
class EagerRun:
    """One eager run of ``EarlyStopRNN``: how far it got, and the graph autograd recorded."""

    label: Message  # shared by every session (a cache): said in each reader's language
    scale: float
    threshold: float
    steps: int
    seq_len: int
    graph: Graph


def early_stop_model(config: RunConfig) -> EarlyStopRNN:
    return EarlyStopRNN(config.input_size, config.hidden_size, threshold=early_stop_threshold(config),
                        seed=config.seed)


def early_stop_threshold(config: RunConfig) -> float:
    """Midway between the calm and the volatile input's first-step hidden norms.

    Chosen from the data so the two inputs part ways at any config: the
    volatile one passes it at once, the calm one (if ever) later.
    """
    x, _ = build(config)
    model = EarlyStopRNN(config.input_size, config.hidden_size, threshold=math.inf, seed=config.seed)
    with torch.no_grad():
        h0 = x.new_zeros(x.shape[0], config.hidden_size)
        calm = model.cell(x[:, 0, :] * CALM_SCALE, h0).norm(dim=1).mean().item()
        volatile = model.cell(x[:, 0, :] * VOLATILE_SCALE, h0).norm(dim=1).mean().item()
    return round((calm + volatile) / 2, 3)


def early_stop_eager(config: RunConfig) -> tuple[EagerRun, EagerRun]:
    """The early-stop model run eagerly on a calm and on a volatile input.

    x: (batch, seq_len, features), the run's input, scaled by ``CALM_SCALE``
    and ``VOLATILE_SCALE``. -> one EagerRun each, with its autograd graph.
    """
    x, _ = build(config)
    model = early_stop_model(config)
    runs = []
    for label, scale in ((later("calm input"), CALM_SCALE), (later("volatile input"), VOLATILE_SCALE)):
        xs = x * scale
        with torch.enable_grad():
            output, steps = model.run_steps(xs)
        runs.append(EagerRun(label, scale, model.threshold, steps, config.seq_len,
                            capture_graph(output, model, xs)))
    return runs[0], runs[1]


@functools.cache  # the source does not change while the server runs; reading it is not free
def steps_source(model: type[EarlyStopRNN]) -> str:
    """The ``run_steps`` method of an early-stop model, as a learner reads it."""
    return textwrap.dedent(inspect.getsource(model.run_steps))
