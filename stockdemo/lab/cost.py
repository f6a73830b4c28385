"""7. What the graph costs: nodes and saved bytes against T, for every cell."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import torch

from stockdemo.cells import CELLS
from stockdemo.config import LAB_BATCH, LAB_HIDDEN, MAX_T, SEED
from stockdemo.knobs import knob_fields
from stockdemo.lab.experiment import LabConfig, seeded_model
from stockdemo.lab.saved import count_saved

COST_SEQ_LENS = (1, 2, 5, 10, 20, 50, 75, 100)
COST_CELLS = CELLS


@knob_fields((LAB_HIDDEN, LAB_BATCH, MAX_T, SEED))
class CostConfig(LabConfig):
    """The memory sweep over T, for every cell."""


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
