"""Server CPU of one step of the Playground's stage, without a browser or a socket.

    python bench/stage_cpu.py [ROOT] [--steps 60]

Runs ROOT's pages/playground.py (default: this checkout) in AppTest and moves the
stage's T between two values already run, as the browser's stage sends them; prints
the median CPU time (``time.process_time``) of one step's run. Give another checkout's
ROOT to compare two versions of the app, interleaving runs on a busy box.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    from streamlit.testing.v1 import AppTest

    from harness.helpers import graph_sent, send_from_view, stage_values, view_element

    at = AppTest.from_file(str(root / "pages" / "playground.py"), default_timeout=120).run()
    times = []
    for i in range(args.steps):
        req = int(graph_sent(view_element(at))["stage"]["req"]) + 1
        started = time.process_time()
        send_from_view(at, knobs={**stage_values(at), "seq_len": 5 + i % 2, "req": req})
        times.append((time.process_time() - started) * 1e3)
    print(f"{root}: median {statistics.median(times):.1f} ms of CPU per stage step ({args.steps} steps)")


if __name__ == "__main__":
    main()
