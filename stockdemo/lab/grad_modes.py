"""6. Recording, ``torch.no_grad()`` and ``torch.inference_mode()``, and the mistakes each allows."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from stockdemo.config import LAB_BATCH, LAB_CELL, LAB_T, SEED
from stockdemo.i18n import N_
from stockdemo.knobs import knob_fields
from stockdemo.lab.experiment import Broken, LabConfig, caught, mse, seeded_model, source
from stockdemo.lab.prices import price_windows
from stockdemo.lab.saved import count_saved, snapshot
from stockdemo.model import StockPredictor

TIMING_REPEATS = 21


@knob_fields((LAB_CELL, LAB_T, LAB_BATCH, SEED))
class NoGradConfig(LabConfig):
    """Recording, no_grad and inference_mode."""


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


MODES = (N_("grad recorded"), "torch.no_grad()", "torch.inference_mode()")  # a msgid, then code


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
    fixed = snapshot(N_("head on cloned features"), mse(model.fc(features.clone()), y), model)
    return NoGradResult(config, error or "", source(head_on_inference_features),
                        source(head_on_cloned_features), before, after, fixed,
                        fix_error is None, time.perf_counter() - started, rows=tuple(rows),
                        inference_error=inference_error or "")


