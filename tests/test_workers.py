"""The training pool, with real worker processes: streams, queue, stop, abandon, crash."""

from __future__ import annotations

import os
import signal
import time

import pytest

from harness.cgroups import oom_score_adj, parent_of, smaps
from harness.helpers import wait_until
from stockdemo.config import TrainConfig
from stockdemo.forkserver import ForkServer
from stockdemo.train import pool as workers
from stockdemo.train import prices as data
from stockdemo.train import training as train
from stockdemo.train import windows
from stockdemo.train import worker as train_worker

QUICK = TrainConfig(source="synthetic", series="gbm", epochs=4, seed=3)
# About 1.5 s per epoch (train.estimated_seconds), 200 epochs allowed: it runs until stopped.
LONG = TrainConfig(source="synthetic", series="gbm", hidden_size=128, seq_len=100, epochs=200,
                   lr="0.0003")
LONG_LIMIT_S = 120.0
ABANDON_S = 2.0


def dataset_for(config: TrainConfig, days: int | None = None) -> windows.Dataset:
    prices = data.synthetic_prices(config.series, 7, **({"days": days} if days else {}))
    return windows.prepare(prices, config.feature_names, config.target, config.seq_len,
                        config.val_pct, config.test_pct)


@pytest.fixture(scope="module")
def pool():
    p = workers.TrainingPool(workers=1, max_waiting=2, abandon_after=ABANDON_S)
    p.start()
    wait_for(lambda: p.status()["ready"] == 1, 60, "the worker did not start")
    yield p
    p.close()


@pytest.fixture(autouse=True)
def idle_pool_after(request):
    yield
    if "pool" in request.fixturenames:
        p = request.getfixturevalue("pool")
        wait_for(lambda: p.status() == {"workers": 1, "ready": 1, "running": 0, "waiting": 0},
                 30, f"the pool did not become idle: {p.status()}")


def wait_for(condition, seconds: float, message: str) -> None:
    wait_until(condition, seconds, message)


def first_progress(stream) -> train.Progress:
    for event in stream:
        if isinstance(event, train.Progress):
            return event
    raise AssertionError("the stream ended before any progress")


def test_worker_streams_the_same_epochs_as_training_in_process(pool):
    ds = dataset_for(QUICK, days=300)
    events = list(pool.train(ds, QUICK))
    here = train.run_training(ds, QUICK)
    assert isinstance(events[-1], train.TrainResult)
    epochs = [e for e in events if isinstance(e, train.Progress) and e.val_loss is not None]
    # Seeded: the worker's losses are torch's own for these settings, bit for bit.
    assert [(p.train_loss, p.val_loss) for p in epochs] == \
        [(p.train_loss, p.val_loss) for p in here.history]
    assert events[-1].forecasts["model"].tolist() == here.forecasts["model"].tolist()


def test_workers_yield_the_cores_to_their_server(pool):
    [pid] = pool.worker_pids()
    server = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, server + train_worker.WORKER_NICE)


def test_workers_are_forked_from_one_warm_parent_and_share_its_torch(pool):
    quick = dataset_for(QUICK, days=300)
    assert isinstance(list(pool.train(quick, QUICK))[-1], train.TrainResult)
    [pid], parent = pool.worker_pids(), pool.parent_pid()
    assert parent_of(pid) == parent
    # Its own pages only: a worker started as its own Python had 247 MB private (docs/hosting.md).
    assert smaps(pid)["Private_Dirty"] < 64, smaps(pid)
    assert smaps(parent)["Private_Dirty"] < smaps(parent)["Shared_Dirty"]  # torch's pages are shared
    # Under memory pressure the kernel picks the highest badness: at 1000 a worker or its parent
    # outranks the server whatever their sizes.
    assert oom_score_adj(pid) == oom_score_adj(parent) == 1000 > oom_score_adj(os.getpid())


def test_waiting_runs_see_their_place_and_a_full_queue_refuses(pool):
    ds = dataset_for(LONG)
    running = pool.train(ds, LONG, LONG_LIMIT_S)
    first_progress(running)
    quick = dataset_for(QUICK, days=300)
    second, third = pool.train(quick, QUICK), pool.train(quick, QUICK)
    assert next(second) == workers.Queued(1, 1)
    assert next(third) == workers.Queued(2, 1)
    with pytest.raises(workers.TrainingRefused, match="busy"):
        next(pool.train(quick, QUICK))
    running.close()  # Stop: the second starts, the third moves up
    assert isinstance(first_progress(second), train.Progress)
    assert next(third) == workers.Queued(1, 1)
    third.close()
    assert isinstance(list(second)[-1], train.TrainResult)


def test_stop_interrupts_a_running_run_within_a_heartbeat(pool):
    ds = dataset_for(LONG)
    stream = pool.train(ds, LONG, LONG_LIMIT_S)
    seen = first_progress(stream)
    assert seen.epoch < 3  # still running: far from its 200 epochs
    stream.close()
    started = time.monotonic()
    wait_for(lambda: pool.status()["running"] == 0, workers.STOP_GRACE_S, "the worker kept training")
    assert time.monotonic() - started < 2 * train.HEARTBEAT_S + 1.0


def test_a_stream_nobody_reads_is_abandoned_and_frees_its_worker(pool):
    ds = dataset_for(LONG)
    tab = pool.train(ds, LONG, LONG_LIMIT_S)
    first_progress(tab)  # then the tab is closed without the stream being closed
    waiting = pool.train(dataset_for(QUICK, days=300), QUICK)
    assert next(waiting) == workers.Queued(1, 1)
    started = time.monotonic()
    assert isinstance(first_progress(waiting), train.Progress)
    assert ABANDON_S - 0.5 < time.monotonic() - started < ABANDON_S + 3
    waiting.close()
    tab.close()


def test_a_killed_worker_ends_only_its_run_and_is_replaced(pool):
    ds = dataset_for(LONG)
    stream = pool.train(ds, LONG, LONG_LIMIT_S)
    first_progress(stream)
    [pid] = pool.worker_pids()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(workers.WorkerLost, match="stopped unexpectedly") as lost:
        for _ in stream:
            pass
    assert str(-signal.SIGKILL) in str(lost.value)  # the exit code multiprocessing reports
    assert "ran short of memory; try a shorter run" in str(lost.value)  # what a SIGKILL most likely is
    wait_for(lambda: pool.status()["ready"] == 1, 60, "no new worker")
    assert pool.worker_pids() != [pid]
    quick = dataset_for(QUICK, days=300)
    assert isinstance(list(pool.train(quick, QUICK))[-1], train.TrainResult)


def test_a_worker_stopped_by_a_signal_is_replaced_only_after_a_pause(pool):
    """SIGTERM is how a server's process group is stopped: the server is likely exiting too,
    and a new worker started at once would outlive it, importing torch for nothing."""
    [pid] = pool.worker_pids()
    stopped = time.monotonic()
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: pool.status()["workers"] == 0, 10, "the stopped worker stayed in the pool")
    wait_for(lambda: pool.status()["ready"] == 1, 60, "no new worker after the pause")
    assert time.monotonic() - stopped >= workers.RESPAWN_AFTER_STOP_S
    assert pool.worker_pids() != [pid]


class ExitOnArrival:
    """Unpickled in the worker as os._exit(3): a crash inside the worker process itself."""

    def __reduce__(self):
        return os._exit, (3,)


def test_a_worker_that_exits_gives_its_session_a_message(pool):
    with pytest.raises(workers.WorkerLost, match=r"exit code 3\)"):
        list(pool.train(ExitOnArrival(), QUICK))
    wait_for(lambda: pool.status()["ready"] == 1, 60, "no new worker")


def test_a_model_too_big_is_refused_with_trains_own_message(pool):
    huge = TrainConfig(source="synthetic", series="gbm", hidden_size=256, seq_len=200, num_layers=4)
    ds = dataset_for(huge)
    assert train.too_big(ds, huge)
    with pytest.raises(ValueError) as refused:
        list(pool.train(ds, huge))
    assert str(refused.value) == train.too_big(ds, huge)


def test_a_pool_of_no_workers_trains_in_a_thread_of_the_server_and_starts_no_process():
    """A host too small for a worker (host.training_workers() == 0): runs in the server."""
    forks = ForkServer()
    small = workers.TrainingPool(workers=0, max_waiting=2, forks=forks)
    try:
        small.start()
        wait_for(lambda: small.status()["ready"] == 1, 30, "the in-server worker did not start")
        quick = dataset_for(QUICK, days=300)
        events = list(small.train(quick, QUICK))
        assert isinstance(events[-1], train.TrainResult)
        assert any(isinstance(e, train.Progress) for e in events)
        assert small.worker_pids() == [] and small.parent_pid() is None
        assert forks.pid() is None  # no fork server was asked for anything
    finally:
        small.close()
        forks.close()


def test_a_run_in_the_server_stops_within_a_heartbeat_when_its_page_lets_go():
    """A thread cannot be killed: it must stop at its next report, as a worker does."""
    small = workers.TrainingPool(workers=0, max_waiting=2)
    try:
        stream = small.train(dataset_for(LONG), LONG, LONG_LIMIT_S)
        first_progress(stream)
        stopped = time.monotonic()
        stream.close()
        wait_for(lambda: small.status()["running"] == 0, 10, "the run in the server did not stop")
        assert time.monotonic() - stopped < train.HEARTBEAT_S + 3
        quick = dataset_for(QUICK, days=300)
        assert isinstance(list(small.train(quick, QUICK))[-1], train.TrainResult)  # and the next one runs
    finally:
        small.close()
