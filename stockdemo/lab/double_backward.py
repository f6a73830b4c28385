"""2. Backward twice: the second ``backward()`` finds the saved tensors freed."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from stockdemo.i18n import N_
from stockdemo.lab.experiment import BREAK_BATCH, BreakConfig, Broken, caught, mse, seeded_model, source
from stockdemo.lab.prices import price_windows
from stockdemo.lab.saved import snapshot


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
    before = snapshot(N_("after forward"), loss, model, x)
    error = caught(lambda: backward_twice(loss))
    after = snapshot(N_("after the first backward()"), loss, draw=False)
    once = model.fc.weight.grad.clone()
    model.zero_grad()
    loss = mse(model(x), y)
    loss.backward(retain_graph=True)
    fixed = snapshot(N_("after backward(retain_graph=True)"), loss, draw=False)
    model.zero_grad()
    fix_error = caught(lambda: backward_twice_retained(loss))
    ratio = float((model.fc.weight.grad / once).mean())
    return TwiceResult(config, error or "", source(backward_twice), source(backward_twice_retained),
                       before, after, fixed, fix_error is None, time.perf_counter() - started,
                       grad_ratio=ratio)


