"""Capture + DOT of the Playground's run, this checkout against another, interleaved on one box.

    python bench/bench_pipeline.py --before /tmp/base [--turns 41]

Issue 50's target: from the run's output tensor to the DOT text (``capture_graph`` then
``render_dot``, "auto" view) <= 1.5 ms at the default run (T 5, hidden 10, 1 layer, RNN) and
<= 70 ms at T 200 L 4 GRU (about 11,000 nodes). Each checkout runs in a worker process of its
own (its own ``stockdemo`` on ``sys.path``, one torch thread as on the server); the workers take
turns, one repetition each, so load from other processes on a shared box falls on both alike.
Each turn is ``BATCH`` repetitions of one size in a row (a T 200 graph just before pushes
the default's data out of the CPU's caches: three times slower, which no Playground move sees).
Prints the medians of wall and CPU milliseconds per checkout and size. The workers' garbage
collector is tuned as a server's (``heap.tune_for_serving``: the imports frozen, young passes
every 20,000 objects); ``--default-gc`` leaves Python's default (each pass after the record
then rescans torch's heap: about 8 ms more at T 200 L 4). ``--why`` also prints,
for this checkout, what the choices in docs/decisions.md ("One pipeline") rest on: a forward
pass alone, plain and under each recorder, and the bytes of a run's record against its graph.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository, for harness

from harness.helpers import ROOT  # noqa: E402

SIZES = {"default": {}, "T200 L4 GRU": {"seq_len": 200, "num_layers": 4, "cell": "gru"}}
TARGET_MS = {"default": 1.5, "T200 L4 GRU": 70.0}
BATCH = 5  # repetitions of one size a worker runs per turn


def worker(root: str, serving_gc: bool) -> None:
    """Answer one line per request: a size's name in -> '[[wall ms, cpu ms, nodes], ...]' out,
    one per repetition of a batch."""
    sys.path.insert(0, root)
    import torch

    from stockdemo import heap
    from stockdemo.config import RunConfig
    from stockdemo.graph.capture import capture_graph
    from stockdemo.live.run import build
    from stockdemo.render.dot import render_dot

    torch.set_num_threads(1)
    runs = {}
    for name, knobs in SIZES.items():
        x, model = build(RunConfig(**knobs))
        runs[name] = (model(x), model, x)
    if serving_gc:
        heap.tune_for_serving()
    print("ready", flush=True)
    for line in sys.stdin:
        output, model, x = runs[line.strip()]
        batch = []
        for _ in range(BATCH):
            wall, cpu = time.perf_counter(), time.process_time()
            graph = capture_graph(output, model, x)
            render_dot(graph, "auto")
            batch.append([(time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3,
                          len(graph.nodes)])
        print(json.dumps(batch), flush=True)


def why(repeats: int) -> None:
    """The forward under each recorder (CPU ms, medians), and a record's bytes against its run's."""
    import torch

    from stockdemo import heap
    from stockdemo.config import RunConfig
    from stockdemo.graph.capture import record_steps
    from stockdemo.graph.lines import LineRecorder
    from stockdemo.live.run import build, in_stockdemo, run

    torch.set_num_threads(1)
    ways = {"plain": contextlib.nullcontext, "call sites": lambda: LineRecorder(in_stockdemo, loops=False),
            "lines and loops": LineRecorder}
    print("forward alone (CPU ms, medians, interleaved):")
    for knobs in ({}, {"seq_len": 200, "num_layers": 4, "cell": "gru"},
                  {"seq_len": 200, "num_layers": 4, "cell": "gru_loop"}):
        x, model = build(RunConfig(**knobs))
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(repeats):
            for name, recorder in ways.items():
                cpu = time.process_time()
                with torch.enable_grad(), recorder():
                    model(x)
                times[name].append((time.process_time() - cpu) * 1e3)
        print(f"  {knobs or 'default'}: " + ", ".join(f"{name} {statistics.median(t):.2f}"
                                                      for name, t in times.items()))
    config = RunConfig(seq_len=200, num_layers=4, cell="gru")
    x, model = build(config)
    record, result = record_steps(model(x), model, x), run(config)
    assert result.graph.preds  # made, as once the run is laid out
    print(f"GRU T 200 L 4: its record {heap.size_of(record) / 1e6:.1f} MB, "
          f"its run (graph included) {heap.size_of(result) / 1e6:.1f} MB")


def _start(root: Path, default_gc: bool) -> subprocess.Popen:
    options = ["--default-gc"] if default_gc else []
    proc = subprocess.Popen([sys.executable, __file__, "--worker", str(root), *options], cwd=root, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _ask(proc: subprocess.Popen, size: str) -> list[list[float]]:
    proc.stdin.write(size + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout (e.g. `git worktree add /tmp/base main`)")
    ap.add_argument("--turns", type=int, default=41, help=f"turns per worker and size, {BATCH} runs each")
    ap.add_argument("--why", action="store_true", help="also the recorders' cost and a record's bytes")
    ap.add_argument("--default-gc", action="store_true",
                    help="Python's collector as it starts, not a server's")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, not args.default_gc)
        return
    if args.why:
        why(15)
    roots = {"before": args.before, "after": ROOT} if args.before else {"this checkout": ROOT}
    procs = {name: _start(root, args.default_gc) for name, root in roots.items()}
    times: dict[tuple[str, str], list[list[float]]] = {(n, s): [] for n in procs for s in SIZES}
    try:
        for size in SIZES:
            for k in range(args.turns + 1):  # a warm-up turn first, not counted
                order = list(procs) if k % 2 else list(reversed(procs))  # who goes first alternates
                for name in order:
                    answer = _ask(procs[name], size)
                    if k:
                        times[name, size] += answer
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait()
    print(f"capture + DOT, medians of {args.turns} x {BATCH} runs, interleaved (ms: wall / CPU), "
          f"{'default' if args.default_gc else 'a server'}'s garbage collector")
    for size in SIZES:
        for name in procs:
            rows = times[name, size]
            wall, cpu = (statistics.median(r[i] for r in rows) for i in (0, 1))
            print(f"  {size:<12} {name:<14} {rows[0][2]:>6} nodes  {wall:7.2f} / {cpu:7.2f}"
                  f"   (target <= {TARGET_MS[size]} ms)")


if __name__ == "__main__":
    main()
