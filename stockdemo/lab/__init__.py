"""The Lab: one batch of different lengths, and the mistakes a run-time graph makes possible.

One module per experiment, in page order: ``lengths``, ``double_backward``,
``carried``, ``inplace``, ``nan_gradient``, ``grad_modes``, ``cost``. Each is
a function of a small frozen config (its knobs declared in
``stockdemo/config.py``) that runs for real and returns a result dataclass:
the numbers, torch's own error message where the experiment breaks on
purpose, the graphs before and after (``Graph``, laid out by ``layout.layout`` and
drawn by the page's interactive view), and how long the experiment took.
What they share: ``experiment`` (the config base, the mistake's result, the
seeded model), ``prices`` (the bundled closes as daily returns) and ``saved``
(what autograd keeps for backward, measured two ways that agree).

Everything a page, a test or the lesson uses is importable from here, as
``lab.different_lengths`` or ``lab.EXPERIMENTS``.
"""

from __future__ import annotations

from collections.abc import Callable

from stockdemo.config import LAB_EXPERIMENTS
from stockdemo.knobs import Knob
from stockdemo.lab.carried import (
    BatchRow,
    DetachConfig,
    DetachResult,
    carried_state,
    carry,
    carry_detached,
    read_on,
    stream_batches,
)
from stockdemo.lab.cost import (
    COST_CELLS,
    COST_SEQ_LENS,
    CostConfig,
    CostResult,
    CostRow,
    cost_seq_lens,
    graph_cost,
)
from stockdemo.lab.double_backward import (
    TwiceResult,
    backward_twice,
    backward_twice_retained,
    twice,
)
from stockdemo.lab.experiment import (
    BREAK_BATCH,
    BreakConfig,
    Broken,
    LabConfig,
    caught,
    mse,
    seeded_model,
    source,
)
from stockdemo.lab.grad_modes import (
    MODES,
    TIMING_REPEATS,
    ModeRow,
    NoGradConfig,
    NoGradResult,
    head_on_cloned_features,
    head_on_inference_features,
    loss_under_no_grad,
    no_grad,
)
from stockdemo.lab.inplace import (
    DAMPING,
    InPlaceConfig,
    InPlaceResult,
    damp_in_place,
    damp_out_of_place,
    in_place,
)
from stockdemo.lab.lengths import (
    PACKED_TOLERANCE,
    LengthsConfig,
    LengthsResult,
    Window,
    cut_windows,
    different_lengths,
    predict_one_by_one,
    predict_packed,
    predict_padded,
    restep_packed,
)
from stockdemo.lab.nan_gradient import (
    ForwardLine,
    NanResult,
    forward_line,
    nan,
    volatility,
    volatility_safe,
)
from stockdemo.lab.prices import FIRST_YEAR, daily_returns, price_windows
from stockdemo.lab.saved import Saved, Snapshot, count_saved, restep, saved_in_graph, snapshot

# The Lab's experiments in page order: English title (config.LAB_EXPERIMENTS, what a link
# carries; its tab says it in the reader's language) -> (config class, experiment).
EXPERIMENTS: dict[str, tuple[type[LabConfig], Callable]] = dict(zip(LAB_EXPERIMENTS, (
    (LengthsConfig, different_lengths),  # Different lengths
    (BreakConfig, twice),  # Backward twice
    (DetachConfig, carried_state),  # Carried hidden state
    (InPlaceConfig, in_place),  # In-place change
    (BreakConfig, nan),  # NaN
    (NoGradConfig, no_grad),  # no_grad
    (CostConfig, graph_cost),  # What the graph costs
), strict=True))

# Every knob of the Lab once, in page order: what a link to the page may set.
KNOBS: tuple[Knob, ...] = tuple(dict.fromkeys(
    knob for config, _ in EXPERIMENTS.values() for knob in config.KNOBS))

__all__ = [
    "BREAK_BATCH", "COST_CELLS", "COST_SEQ_LENS", "DAMPING", "EXPERIMENTS", "FIRST_YEAR", "KNOBS",
    "MODES", "PACKED_TOLERANCE", "TIMING_REPEATS",
    "BatchRow", "BreakConfig", "Broken", "CostConfig", "CostResult", "CostRow", "DetachConfig",
    "DetachResult", "ForwardLine", "InPlaceConfig", "InPlaceResult", "LabConfig", "LengthsConfig",
    "LengthsResult", "ModeRow", "NanResult", "NoGradConfig", "NoGradResult", "Saved", "Snapshot",
    "TwiceResult", "Window",
    "backward_twice", "backward_twice_retained", "carried_state", "carry", "carry_detached", "caught",
    "cost_seq_lens", "count_saved", "cut_windows", "daily_returns", "damp_in_place",
    "damp_out_of_place", "different_lengths", "forward_line", "graph_cost", "head_on_cloned_features",
    "head_on_inference_features", "in_place", "loss_under_no_grad", "mse", "nan", "no_grad",
    "predict_one_by_one", "predict_packed", "predict_padded", "price_windows", "read_on", "restep",
    "restep_packed", "saved_in_graph", "seeded_model", "snapshot", "source", "stream_batches", "twice",
    "volatility", "volatility_safe",
]
