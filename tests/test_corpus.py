"""Learners' programs (tests/corpus/*.py) run the same here and in the sandbox.

Each program is what a learner writes after a chapter of the PyTorch tutorials and
ends with the tensor it names ``predictions``. Run in this process as the sandbox
runs it (``harness.learners.run_here``) and through the page's call (``run_code``), it
must print the same text and give ``predictions`` the same shape and the same ops by
type as a plain walk of ``grad_fn`` finds here; and each graph its backward() calls freed
must be drawn with the ops torch's walk found here just before that backward(). The
sandbox runs start first, on as many threads as the pool has places, and overlap the
runs here. They keep every limit but wall-clock time: on a busy box a run must not be
stopped for waiting for a core.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest
import torch

from harness.learners import CORPUS, LocalRun, run_here
from stockdemo.sandbox import Limits, run_code
from stockdemo.sandbox.child import MAX_GRAPHS
from stockdemo.sandbox.pool import shared_pool

OPTIMIZERS = sorted(name for name in torch.optim.__all__
                    if isinstance(getattr(torch.optim, name), type)
                    and issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
                    and name != "Optimizer")
LIMITS = dataclasses.replace(Limits.from_env(), wall_s=60.0)


@pytest.fixture(scope="module")
def sandbox_runs():
    """File name -> the Future of its run through ``run_code``."""
    pool = concurrent.futures.ThreadPoolExecutor(shared_pool().slots)
    yield {path.name: pool.submit(run_code, path.read_text(), LIMITS) for path in CORPUS}
    pool.shutdown(cancel_futures=True)


@pytest.fixture(scope="module")
def local_runs(sandbox_runs, tmp_path_factory) -> dict[str, LocalRun | BaseException]:
    """File name -> its run here (or what it raised), each in an empty folder of its own."""
    runs: dict[str, LocalRun | BaseException] = {}
    for path in CORPUS:
        try:
            runs[path.name] = run_here(path.read_text(), tmp_path_factory.mktemp(path.stem))
        except Exception as err:  # noqa: BLE001 - that program's test reports it
            runs[path.name] = err
    return runs


def local(local_runs: dict, name: str) -> LocalRun:
    run = local_runs[name]
    if isinstance(run, BaseException):
        raise AssertionError(f"{name} fails outside the sandbox: {type(run).__name__}: {run}") from run
    return run


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_a_program_prints_and_draws_the_same_in_the_sandbox_as_here(path: Path, local_runs, sandbox_runs):
    here = local(local_runs, path.name)
    assert here.warnings == (), "a warning prints once per process: the program must not raise one"
    assert here.ops_by_type, "predictions has no graph"
    run = sandbox_runs[path.name].result()
    assert run.ok, f"{run.status}: {run.message}\nprinted before it stopped:\n{run.printed}"
    assert run.printed == here.printed
    assert run.shape == here.shape
    assert run.ops_by_type == here.ops_by_type


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_each_graph_a_programs_backward_freed_is_drawn_as_torch_walked_it(path: Path, local_runs,
                                                                         sandbox_runs):
    here = local(local_runs, path.name)
    run = sandbox_runs[path.name].result()
    assert run.ok, f"{run.status}: {run.message}"
    assert run.built == len(here.backwards)
    drawn = [dict(Counter(node["op"] for node in graph["nodes"])) for graph in run.graphs]
    assert drawn == list(here.backwards[:MAX_GRAPHS])


def test_there_are_forty_programs_or_more_each_saying_what_it_teaches():
    assert len(CORPUS) >= 40
    for path in CORPUS:
        first = path.read_text().splitlines()[0]
        assert re.fullmatch(r"# \S.{10,}", first), f"{path.name}: the first line says what it teaches"


def test_every_optimizer_in_torch_optim_takes_a_step_in_some_program(local_runs):
    assert len(OPTIMIZERS) >= 13  # torch 2.13: SGD, Adam ... LBFGS, SparseAdam, Adafactor, Muon
    stepped = set().union(*(local(local_runs, path.name).optimizers for path in CORPUS))
    assert set(OPTIMIZERS) - stepped == set()
