"""What the handout costs: its file's size and build time, and the Playground's server CPU per move.

    python bench/handout_cost.py [--moves 60]

1. The handout (``stockdemo.render.handout.run_handout``, what ``python -m stockdemo graph
   --format html`` writes) at the default run and at GRU T = 200, L = 4, in the
   view the app picks (``auto``) and unrolled: bytes, and seconds to build the
   file from a picture and trace already made (what a click on the download
   costs the server), median of 5.
2. The Playground's server CPU per move, one session on one process
   (``streamlit run``), moving T between two settings already computed, as
   bench/load.py's Session does: the cost every learner pays whether or not they
   download (the download is built only on its click, inside the table's
   expander, which is drawn only while open).

Prints the figures and the load average; the box is shared, so compare medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness and stockdemo

from harness import (
    measures,  # noqa: E402
    servers,  # noqa: E402
    sessions,  # noqa: E402  the session client
)


def handout_figures() -> list[str]:
    from stockdemo import RunConfig, run
    from stockdemo.layout.steps import layout
    from stockdemo.render.handout import run_handout
    from stockdemo.replay.model import trace_run

    lines = []
    for config in (RunConfig(), RunConfig(cell="gru", seq_len=200, num_layers=4)):
        graph = run(config).graph
        trace = trace_run(config)
        for view in ("auto", "unrolled"):
            picture = layout(graph, view, max_nodes=None)
            times = []
            for _ in range(5):
                started = time.perf_counter()
                text = run_handout(config, picture, trace)
                times.append(time.perf_counter() - started)
            size = len(text.encode())
            lines.append(f"handout {config.cell} T {config.seq_len} L {config.num_layers}, view {view} "
                         f"({picture.view}, {len(picture.nodes):,} boxes): {size / 1e3:,.0f} KB, "
                         f"built in {statistics.median(times) * 1e3:.0f} ms")
    return lines


async def moves(target: servers.Target, n: int) -> tuple[list[float], float]:
    """-> (seconds per move, server CPU seconds over the timed moves)."""
    s = sessions.Session(target.url, "playground")
    await s.open()
    try:
        await s.run()
        for value in (6, 7):  # both settings computed once, before the timing
            s.set_value("seq_len", value)
            await s.run()
        times = []
        cpu0 = target.cpu_s()
        for i in range(n):
            s.set_value("seq_len", 6 + i % 2)
            out = await s.run()
            if not out.ok:
                raise RuntimeError(out.errors)
            times.append(out.seconds)
        return times, target.cpu_s() - cpu0
    finally:
        await s.close()


def cpu_per_move(n: int) -> str:
    target = servers.Target("single")
    try:
        target.wait_ready()
        target.wait_settled()
        asyncio.run(moves(target, 4))  # warm
        times, cpu = asyncio.run(moves(target, n))
    finally:
        target.stop()
    return (f"Playground, one session, cached moves: {cpu / n * 1e3:.1f} ms of server CPU a move, "
            f"median {statistics.median(times) * 1e3:.0f} ms to script_finished, over {n} moves")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moves", type=int, default=60)
    ap.add_argument("--only", choices=("files", "cpu"), help="one half (cpu: also on a tree without "
                                                             "the handout, to compare)")
    args = ap.parse_args()
    print(measures.reference_line(), flush=True)
    if args.only != "cpu":
        for line in handout_figures():
            print(line, flush=True)
    if args.only != "files":
        print(cpu_per_move(args.moves), flush=True)
    print(measures.load_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
