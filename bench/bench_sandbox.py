"""The sandbox's pool (stockdemo/sandbox): fork to result for the seed, and five endless loops at once.

    .venv/bin/python bench/bench_sandbox.py [--runs 20] [--loops 5]

Prints:
- the fork server's start (import torch and its warm-up) and its size;
- the seed through ``run_code``: the median and p90 of ``--runs`` runs, both the
  fork to result timed in the fork server and the whole call timed here;
- a training loop of ``--steps`` SGD steps of the seed: its CPU time (median of five)
  against the CPU limit, and how many graphs it built and kept;
- ``--loops`` sessions submitting ``while True: pass`` at once, while one more
  session submits the seed every 0.5 s: when each loop ended and why, and how
  long the seed runs waited and took meanwhile (the pool has one place per core,
  so the seed waits behind the loops: the figure says by how much).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stockdemo.sandbox import SEED_CODE, Limits, run_code, shared_pool  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def seed_runs(n: int) -> None:
    fork, call = [], []
    for _ in range(n):
        started = time.perf_counter()
        run = run_code(SEED_CODE)
        call.append(time.perf_counter() - started)
        assert run.ok, run.message
        fork.append(run.seconds)
    print(f"seed x {n}: fork to result median {statistics.median(fork) * 1000:.0f} ms, "
          f"p90 {percentile(fork, 90) * 1000:.0f} ms; run_code call median "
          f"{statistics.median(call) * 1000:.0f} ms, p90 {percentile(call, 90) * 1000:.0f} ms")


TRAINING = SEED_CODE + """
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range({steps}):
    opt.zero_grad()
    loss = model(input_data).pow(2).mean()
    loss.backward()
    opt.step()
print(f"{{loss.item():.6f}}")
"""


def training(steps: int) -> None:
    cpu, fork = [], []
    for _ in range(5):
        run = run_code(TRAINING.format(steps=steps), Limits(wall_s=60))
        assert run.ok, run.message
        cpu.append(run.cpu_s)
        fork.append(run.seconds)
    print(f"{steps} SGD steps of the seed: CPU median {statistics.median(cpu):.3f} s "
          f"(limit {Limits().cpu_s} s), fork to result median {statistics.median(fork):.3f} s; "
          f"{run.built} graphs built, {len(run.graphs)} kept")


def loops(n: int) -> None:
    ended: list[tuple[float, str, float]] = []
    seeds: list[tuple[float, float, bool]] = []
    start = time.perf_counter()

    def loop() -> None:
        run = run_code("while True:\n    pass\n")
        ended.append((time.perf_counter() - start, run.error.limit or run.status, run.queued_s))

    threads = [threading.Thread(target=loop) for _ in range(n)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        began = time.perf_counter()
        run = run_code(SEED_CODE)
        seeds.append((time.perf_counter() - began, run.queued_s, run.ok))
        time.sleep(0.5)
    for t in threads:
        t.join()
    status = shared_pool().status()
    print(f"{n} endless loops at once on {status['slots']} places:")
    for at, why, queued in sorted(ended):
        print(f"  a loop ended {at:.1f} s after the start ({why}), having waited {queued:.1f} s for a place")
    calls = [s for s, _, _ in seeds]
    print(f"  the seed, meanwhile, every 0.5 s: {len(seeds)} runs, {sum(ok for *_, ok in seeds)} ok, "
          f"call median {statistics.median(calls):.2f} s, max {max(calls):.2f} s "
          f"(waiting for a place: max {max(q for _, q, _ in seeds):.2f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--loops", type=int, default=5)
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    started = time.perf_counter()
    first = run_code(SEED_CODE)
    assert first.ok, first.message
    info = shared_pool().info
    print(f"fork server: first run after {time.perf_counter() - started:.1f} s (import torch, warm-up); "
          f"{info.get('rss_mb')} MB resident; Landlock ABI {info.get('landlock')}; walls: {first.walls}")
    seed_runs(args.runs)
    training(args.steps)
    loops(args.loops)


if __name__ == "__main__":
    main()
