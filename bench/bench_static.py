"""Median time of each static-graph capture at the default config.

    .venv/bin/python bench/bench_static.py [repeats]

The first call of each capture is a warm-up (dynamo and export import and
cache their machinery once per process) and is printed apart.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stockdemo import static  # noqa: E402
from stockdemo.config import RunConfig  # noqa: E402

CONFIG = RunConfig()
CAPTURES: dict[str, Callable[[], object]] = {
    "torch.compile, T = 5 (1 graph)": lambda: static.compile_capture(CONFIG, (5,)),
    "torch.compile, T = 5, 6, 7, 5 (3 graphs)": lambda: static.compile_capture(CONFIG, (5, 6, 7, 5)),
    "torch.export, static shapes": lambda: static.export_static(CONFIG),
    "torch.export, dynamic T": lambda: static.export_dynamic_seq_len(CONFIG),
    "eager early-stop runs + graphs": lambda: static.early_stop_eager(CONFIG),
    "torch.export, early-stop model": lambda: static.export_early_stop(CONFIG),
    "torch.export, torch.cond rewrite, T = 3": lambda: static.export_cond_stop(CONFIG.replace(seq_len=3)),
}


def main(repeats: int = 5) -> None:
    torch.set_num_threads(1)  # as on the server
    print(f"torch {torch.__version__}, default config, median of {repeats} after one warm-up")
    for name, capture in CAPTURES.items():
        started = time.perf_counter()
        capture()
        warm_up = time.perf_counter() - started
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            capture()
            times.append(time.perf_counter() - started)
        print(f"{name:44s} median {statistics.median(times) * 1e3:8.0f} ms   "
              f"(first call {warm_up * 1e3:6.0f} ms)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
