"""How fast is this box? A fixed piece of the app's own work, timed, to compare figures across machines.

    python bench/reference.py [--repeats 101]

Prints one line: the median CPU milliseconds of one "reference move", the core
work of a Playground move at T = 100 with nothing cached (seed, build, forward,
graph capture, layout of every node, the DOT text), on one torch thread as the
server runs it. ``bench/load.py`` prints it before every scenario.

Why: the same app code took 27-32 ms of server CPU per Playground move in a
burst at stop 15 and 17-21 ms at stop 16 (b08a02c), on two boxes sold as the
same 2 cores (docs/hosting.md); without a reference, a faster box reads as a
faster app. Figures from two boxes compare after dividing by this one; it
varies by about ±15 % between runs on one box.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

import torch  # noqa: E402

from stockdemo.config import RunConfig  # noqa: E402
from stockdemo.layout.steps import layout  # noqa: E402
from stockdemo.live.run import run  # noqa: E402
from stockdemo.render.dot import write_dot  # noqa: E402

CONFIG = RunConfig(seq_len=100, hidden_size=32)


def reference_ms(repeats: int = 101) -> float:
    """Median CPU ms of one reference move (this process's CPU time: other load adds little)."""
    torch.set_num_threads(1)
    times = []
    for i in range(repeats + 5):  # warm-up moves first: first calls pay one-off costs
        t0 = time.process_time()
        result = run(CONFIG)
        write_dot(layout(result.graph, "auto", max_nodes=None))
        if i >= 5:
            times.append((time.process_time() - t0) * 1e3)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=101)
    args = ap.parse_args()
    print(f"reference move (T {CONFIG.seq_len}, H {CONFIG.hidden_size}, nothing cached): "
          f"{reference_ms(args.repeats):.2f} ms of CPU, median of {args.repeats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
