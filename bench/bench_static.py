"""Static vs dynamic: the page's three waits, then each static-graph capture alone, at the defaults.

    .venv/bin/python bench/bench_static.py [repeats]

The page (AppTest, so server time without the browser; medians of ``repeats``):

- **Capture**: a press of *Capture static graphs* on cold caches: torch.compile
  at T = 5 and the four torch.export calls. Target: 2 s or less, else progress
  shown (the page shows a progress bar, step by step).
- **A move to a new T**: one more trace by the learner's compile session and
  the exports at that T. Progress shown.
- **A move to a captured T**: its graph runs again, the rest from the caches.
  Target: 0.3 s or less.

The first call of each capture is a warm-up (dynamo and export import and
cache their machinery once per process) and is printed apart.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("STREAMLIT_LOGGER_LEVEL", "error")  # AppTest's "no runtime" notes, once per page
import streamlit as st  # noqa: E402
import torch  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from harness.helpers import ROOT  # noqa: E402
from stockdemo import static_graphs as static  # noqa: E402
from stockdemo.config import RunConfig  # noqa: E402

PAGE = str(ROOT / "pages" / "static_vs_dynamic.py")
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


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def page_figures(repeats: int) -> None:
    """Capture, a move to a new T and one back to a captured T, as the page runs them."""
    capture, new, captured = [], [], []
    warm = AppTest.from_file(PAGE, default_timeout=600).run()
    first = timed(warm.button(key="static_capture").click().run)
    for i in range(repeats):
        st.cache_data.clear()  # a press on cold caches: every export runs
        st.cache_resource.clear()
        at = AppTest.from_file(PAGE, default_timeout=600).run()
        capture.append(timed(at.button(key="static_capture").click().run))
        # lengths no earlier repeat used: each is a new shape and new exports
        new.append(timed(at.slider(key="seq_len").set_value(20 + i).run))
        captured.append(timed(at.slider(key="seq_len").set_value(5).run))
        assert not at.exception, at.exception
    print(f"page, Capture (cold caches)       median {statistics.median(capture):6.2f} s   "
          f"(first in this process {first:.2f} s; target 2 s or progress shown)")
    print(f"page, move to a new T             median {statistics.median(new):6.2f} s   (progress shown)")
    print(f"page, move to a captured T        median {statistics.median(captured) * 1e3:6.0f} ms  "
          f"(target 300 ms)")


def main(repeats: int = 5) -> None:
    torch.set_num_threads(1)  # as on the server
    print(f"torch {torch.__version__}, default config, median of {repeats} after one warm-up; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    page_figures(repeats)
    for name, capture in CAPTURES.items():
        warm_up = timed(capture)
        times = [timed(capture) for _ in range(repeats)]
        print(f"{name:44s} median {statistics.median(times) * 1e3:8.0f} ms   "
              f"(first call {warm_up * 1e3:6.0f} ms)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
