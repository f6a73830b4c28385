"""What every Lab experiment is made of: its config, the mistake it makes, the seeded model.

Each experiment is a function of a small frozen config (its knobs declared in
``stockdemo/config.py``) that runs for real and returns a result dataclass.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from stockdemo.config import LAB_CELL, LAB_T, SEED, RunConfig
from stockdemo.knobs import Knob, KnobConfig, knob_fields
from stockdemo.lab.saved import Snapshot
from stockdemo.live.run import build
from stockdemo.model import StockPredictor

BREAK_BATCH = 32  # windows per batch in the break-it experiments


class LabConfig(KnobConfig):
    """A Lab experiment's config: its fields are its knobs (``knob_fields``)."""

    @classmethod
    def shown_knobs(cls, settings: Mapping[str, object]) -> tuple[Knob, ...]:
        """The knobs that change this experiment, given the current ``settings`` by name."""
        return cls.KNOBS


@knob_fields((LAB_CELL, LAB_T, SEED))
class BreakConfig(LabConfig):
    """Backward twice and the NaN: a cell, a window length, a seed."""


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


def seeded_model(cell: str, hidden: int, seed: int) -> StockPredictor:
    """The Playground's StockPredictor for one feature a day (its return), built from ``seed``."""
    _, model = build(RunConfig(seq_len=1, batch_size=1, input_size=1, hidden_size=hidden,
                               cell=cell, seed=seed))
    return model


def mse(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return ((predictions - targets) ** 2).mean()


@dataclass(frozen=True)
class Broken:
    """A mistake made on purpose: torch's message, the graph around it, and the fix."""

    config: LabConfig  # the experiment's own: BreakConfig, InPlaceConfig, DetachConfig, NoGradConfig
    error: str  # torch's own message
    mistake: str  # the code that made it (the very function that ran)
    fix: str
    before: Snapshot
    after: Snapshot
    fixed: Snapshot
    fix_ran: bool
    seconds: float


