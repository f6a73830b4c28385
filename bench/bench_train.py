"""Time the default training run: its length, its live updates, memory, the longest gap between reports.

    .venv/bin/python bench/bench_train.py [--repeats 5]

Targets on the 2-core box (issue 25): a run long enough to follow, a few
seconds, at most 5; the curves redrawn at least 4 times a second, at the page's
own cadence (``ui.training.CHART_EVERY_S``: a redraw when an epoch ends at least
that long after the last redraw); progress at least every 0.5 s.
The first run in a process also pays a one-off import that ``torch.optim``
triggers (``torch._dynamo``, a few seconds); it is reported apart, as a server
pays it once, not per click.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stockdemo.config import TrainConfig  # noqa: E402
from stockdemo.train import prices as data
from stockdemo.train import training as train  # noqa: E402

# The page's redraw cadence (stockdemo/ui/training.py CHART_EVERY_S), not imported: that
# module imports Streamlit, and this benchmark times the core alone.
CHART_EVERY_S = 0.2


def one_run(config: TrainConfig) -> tuple[float, float, int, int]:
    """Load, window and train as the page does -> (seconds, max progress gap s, epochs, redraws)."""
    started = time.perf_counter()
    dataset, _ = data.load_dataset(config)
    last, gap, epochs, redraws, drawn_at = started, 0.0, 0, 0, -CHART_EVERY_S
    for event in train.train(dataset, config):
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
        if isinstance(event, train.Progress) and event.val_loss is not None:
            epochs = event.epoch
            if now - drawn_at >= CHART_EVERY_S:
                redraws, drawn_at = redraws + 1, now
    return time.perf_counter() - started, gap, epochs, redraws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as on the server (stockdemo/ui/frame.py)
    config = TrainConfig()

    rss_at_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cold_seconds, cold_gap, _, _ = one_run(config)
    runs = [one_run(config) for _ in range(args.repeats)]
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kB -> MB
    # tracemalloc slows the run, so it gets a run of its own; it sees Python and numpy, not torch.
    tracemalloc.start()
    one_run(config)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    seconds = [r[0] for r in runs]
    print(f"default training run ({config.ticker.upper()} {config.start_year}-{config.end_year}, "
          f"{config.cell}, T={config.seq_len}, hidden {config.hidden_size}, "
          f"up to {config.epochs} epochs), {args.repeats} repeats:")
    print(f"  median wall time       {statistics.median(seconds):.2f} s "
          f"(min {min(seconds):.2f}, max {max(seconds):.2f}; target a few seconds, <= 5 s)")
    print(f"  epochs run             {runs[0][2]} (early-stopping patience {config.patience or 'off'})")
    rates = [r[3] / r[0] for r in runs]
    print(f"  live curve redraws     median {statistics.median(r[3] for r in runs):.0f} per run, "
          f"{statistics.median(rates):.1f} a second (target >= 4)")
    print(f"  max progress gap       {max(r[1] for r in runs):.3f} s (target <= 0.5 s)")
    print(f"  peak RSS of process    {peak_rss:.0f} MB (after imports: {rss_at_start:.0f} MB; "
          "torch, pandas and plotly loaded)")
    print(f"  peak traced allocation {traced / 2**20:.1f} MB (Python and numpy, tracemalloc)")
    print(f"  first run in process   {cold_seconds:.2f} s, max gap {cold_gap:.2f} s "
          "(one-off torch._dynamo import by torch.optim)")
    print(f"  load average           {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
