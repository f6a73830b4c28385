"""A spare's copies of the pages a run writes (``stockdemo/sandbox/prefault.py``), counted by the kernel.

The experiment runs in a fresh process (``EXPERIMENT``), warmed as the fork server is: it
forks, and a fork of a process with the test runner's threads could hang on a lock one of
them held.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.helpers import ROOT

EXPERIMENT = r"""
import gc, json, os, resource
import numpy as np
import torch
torch.set_num_threads(1)
from stockdemo.sandbox import prefault, watch

watch.warm_up()
gc.collect()
gc.freeze()
pages = prefault.pages_written(watch.run_seed)


def in_child(measure):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, json.dumps(measure()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    out = json.loads(os.read(read_end, 4096))
    os.waitpid(pid, 0)
    return out


def measure(touching):
    start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    touched = prefault.touch(pages) if touching else 0
    mid = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    watch.run_seed(watch.SEED_CODE + "\n# another text\n")
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - mid
    return {"touched": int(touched), "faults": faults, "touching": mid - start}


# A parent's array, its pages touched in a child: copied (the child's own), no byte changed.
array = np.random.default_rng(0).integers(0, 255, size=64 * prefault.PAGE, dtype=np.uint8)
kept = array.copy()
first = -(-array.ctypes.data // prefault.PAGE)
mine = np.arange(first, first + 32, dtype=np.uint64)


def copied_as_it_was():
    before = np.isin(mine, prefault.own_pages(prefault.writable())).sum()
    touched = prefault.touch(mine)
    after = np.isin(mine, prefault.own_pages(prefault.writable())).sum()
    return {"touched": int(touched), "own_before": int(before), "own_after": int(after),
            "same": bool(np.array_equal(array, kept))}


unmapped = np.array([1], dtype=np.uint64)  # page 1: never mapped (the null page's neighbour)
print(json.dumps({"pages": len(pages), "plain": in_child(lambda: measure(False)),
                  "touched": in_child(lambda: measure(True)), "unmapped": int(prefault.touch(unmapped)),
                  "array": in_child(copied_as_it_was)}))
"""


@pytest.fixture(scope="module")
def experiment() -> dict:
    done = subprocess.run([sys.executable, "-c", EXPERIMENT], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pages_a_seed_run_writes_are_found_in_a_probe_child(experiment):
    assert experiment["pages"] > 500  # refcounts, free lists: thousands of pages, not a handful


def test_a_child_that_touched_them_first_faults_far_less_in_its_run(experiment):
    """The kernel's own count of page faults in the run: the copies were made before it."""
    plain, touched = experiment["plain"], experiment["touched"]
    assert touched["touched"] > 0.9 * experiment["pages"]
    assert touched["faults"] < plain["faults"] / 2, (plain, touched)


def test_touching_copies_a_page_and_changes_no_byte_and_skips_a_page_not_mapped(experiment):
    array = experiment["array"]
    assert array["own_before"] == 0 and array["touched"] == 32 and array["own_after"] == 32, array
    assert array["same"]
    assert experiment["unmapped"] == 0
