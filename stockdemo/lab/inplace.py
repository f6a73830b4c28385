"""4. An in-place change to a tensor autograd saved: its version counter gives it away."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import nn

from stockdemo.config import LAB_T, SEED
from stockdemo.i18n import N_
from stockdemo.knobs import knob_fields
from stockdemo.lab.experiment import BREAK_BATCH, Broken, LabConfig, caught, mse, seeded_model, source
from stockdemo.lab.prices import price_windows
from stockdemo.lab.saved import snapshot

DAMPING = 0.9


@knob_fields((LAB_T, SEED))
class InPlaceConfig(LabConfig):
    """The in-place change runs a for-loop over ``nn.RNNCell``: no cell to choose."""


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
    before = snapshot(N_("damped in place"), loss, model, x)
    error = caught(loss.backward)
    after = snapshot(N_("after the failed backward()"), loss, draw=False)
    loss = mse(model.fc(damp_out_of_place(cell, x)[:, -1]), y)
    fixed = snapshot(N_("damped out of place"), loss, model, x)
    fix_error = caught(loss.backward)
    return InPlaceResult(config, error or "", source(damp_in_place), source(damp_out_of_place),
                         before, after, fixed, fix_error is None, time.perf_counter() - started,
                         version=version)


