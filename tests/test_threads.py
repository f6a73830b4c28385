"""One thread per op on every thread: Streamlit runs each rerun on a new thread.

``torch.set_num_threads`` holds only for the thread that calls it; OpenMP's count
for threads started later is read once, when torch loads (stockdemo/__init__.py).
Without it a rerun's first tanh started an OpenMP team of its own (a cold
Playground step: 40-118 ms on the server instead of 3-6 ms).
"""

import os
import subprocess
import sys

from harness.helpers import ROOT

PROBE = """
import os, threading
import stockdemo, torch
x = torch.randn(1024, 1024)
seen = []
def rerun():  # as Streamlit runs a page: on a thread of its own (its OpenMP team ends with it)
    x.tanh(); x @ x; (x * 2).exp().sum()
    seen.append(len(os.listdir("/proc/self/task")))
x.tanh()
before = len(os.listdir("/proc/self/task")) + 1  # and the rerun's thread
thread = threading.Thread(target=rerun); thread.start(); thread.join()
print(before, seen[0], torch.get_num_threads())
"""


def _probe(env: dict[str, str]) -> list[int]:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    return [int(n) for n in out.stdout.split()]


def test_a_rerun_thread_starts_no_openmp_team_of_its_own():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    before, after, threads = _probe(env)
    assert after == before, f"the rerun's ops ran on {after - before} more thread(s)"
    assert threads == 1


def test_the_callers_openmp_setting_wins():
    env = {k: v for k, v in os.environ.items() if k != "MKL_NUM_THREADS"} | {"OMP_NUM_THREADS": "2"}
    before, after, threads = _probe(env)
    assert after > before  # the team torch would start without stockdemo's default
