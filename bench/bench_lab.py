"""Median run time of each Lab experiment at its defaults, and its report for the page.

    .venv/bin/python bench/bench_lab.py [repeats]

Target: every experiment under 1 s at its defaults (the page shows each run's
own time too). Also prints the largest loop-vs-packed gap over every year,
cell and cut the Lengths knobs allow at 16 windows: the measurement behind
lab.PACKED_TOLERANCE. The load average is printed: on a shared box timings are noisy.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stockdemo import lab
from stockdemo.config import LAB_CELLS, LAB_YEAR  # noqa: E402
from stockdemo.lab import figures as lab_figures  # noqa: E402


def main(repeats: int = 7) -> None:
    torch.set_num_threads(1)  # as on the server
    print(f"torch {torch.__version__}, load average {os.getloadavg()[0]:.1f}, "
          f"median of {repeats} after one warm-up")
    for name, (config_class, experiment) in lab.EXPERIMENTS.items():
        config = config_class()
        started = time.perf_counter()
        experiment(config)
        warm_up = time.perf_counter() - started
        runs, reports = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            result = experiment(config)
            runs.append(time.perf_counter() - started)
            started = time.perf_counter()
            lab_figures.report(result)
            reports.append(time.perf_counter() - started)
        run = statistics.median(runs)
        print(f"{name:22s} median {run * 1e3:6.0f} ms  + report {statistics.median(reports) * 1e3:5.0f} ms"
              f"   (first call {warm_up * 1e3:5.0f} ms){'   OVER 1 s' if run > 1 else ''}")
    gaps = [lab.different_lengths(lab.LengthsConfig(lab_cell=cell, lab_year=year, weeks=16, cut=cut))
            .packed_gap for cell in LAB_CELLS for year in range(LAB_YEAR.low, LAB_YEAR.high + 1)
            for cut in ("weeks", "set")]
    print(f"loop vs packed, {len(gaps)} batches: largest gap {max(gaps):.2g} "
          f"(tolerance {lab.PACKED_TOLERANCE:.0e}), {sum(g == 0 for g in gaps)} exactly equal")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
