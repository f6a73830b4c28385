"""5. A NaN: a silent backward, then anomaly mode naming the forward line that made it."""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import torch

from stockdemo.i18n import N_
from stockdemo.lab.experiment import BREAK_BATCH, BreakConfig, Broken, caught, mse, seeded_model, source
from stockdemo.lab.prices import price_windows
from stockdemo.lab.saved import snapshot


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
    before = snapshot(N_("forward: a finite loss"), loss, model, x)
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
    after = snapshot(N_("anomaly mode: backward stopped"), loss, draw=False)
    traceback = next((str(w.message) for w in seen
                      if "Traceback of forward call" in str(w.message)), "")
    loss_fixed = mse(volatility_safe(model(x)), target)
    fixed = snapshot(N_("sqrt kept away from negatives"), loss_fixed, model, x)
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


