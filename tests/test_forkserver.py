"""The one fork server: the sandbox's runs and training's workers forked by one warm process,
each child walled in its own way, the process replaced when it dies, a kind that cannot work
here refused with its reason."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading

import pytest

from harness.cgroups import children, oom_score_adj, parent_of, seccomp_mode
from harness.helpers import alive, wait_until
from stockdemo.config import TrainConfig
from stockdemo.forkserver import ForkServer, client
from stockdemo.forkserver.wire import Channel
from stockdemo.sandbox import SEED_CODE, CodePool, Limits
from stockdemo.train import pool as workers
from stockdemo.train import prices, training, windows
from stockdemo.train import worker as train_worker

QUICK = TrainConfig(source="synthetic", series="gbm", epochs=2, seed=3)
SLEEPS = "import time\ntime.sleep(30)\n"


def quick_dataset() -> windows.Dataset:
    series = prices.synthetic_prices(QUICK.series, 7, days=300)
    return windows.prepare(series, QUICK.feature_names, QUICK.target, QUICK.seq_len, QUICK.val_pct,
                           QUICK.test_pct)


def status_field(pid: int, name: str) -> str:
    for line in open(f"/proc/{pid}/status").read().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name} in /proc/{pid}/status")


def limit(pid: int, name: str) -> str:
    """The soft value of one of /proc/PID/limits' rows ("Max core file size" -> "0")."""
    for line in open(f"/proc/{pid}/limits").read().splitlines():
        if line.startswith(name):
            return line[len(name):].split()[0]
    raise AssertionError(f"no {name} in /proc/{pid}/limits")


@pytest.fixture(scope="module")
def forks():
    server = ForkServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def pools(forks):
    code = CodePool(slots=2, forks=forks)
    trainer = workers.TrainingPool(workers=1, max_waiting=2, forks=forks)
    trainer.start()
    assert code.run(SEED_CODE, Limits()).ok
    wait_until(lambda: trainer.status()["ready"] == 1, 120, "the training worker ready")
    yield code, trainer
    trainer.close()
    code.close()


def test_the_sandboxs_runs_and_trainings_workers_are_forked_by_one_single_threaded_process(forks, pools):
    code, trainer = pools
    server = forks.pid()
    assert code.status()["pid"] == trainer.parent_pid() == server
    [worker] = trainer.worker_pids()
    assert parent_of(worker) == server
    run = code.run("import os\nprint(os.getppid())\n" + SEED_CODE, Limits())
    assert run.ok, run.message
    assert int(run.printed.split()[0]) == server
    assert status_field(server, "Threads") == "1"  # forking it is safe
    assert isinstance(list(trainer.train(quick_dataset(), QUICK))[-1], training.TrainResult)


def test_a_training_worker_has_walls_of_its_own_and_none_of_the_sandboxs(forks, pools):
    code, trainer = pools
    server = forks.pid()
    [worker] = trainer.worker_pids()
    before = {worker, *children(server)}  # with the spare forked after the last answer (watch.Spare)
    sleeping = threading.Thread(target=code.run, args=(SLEEPS, Limits(wall_s=3)))
    sleeping.start()
    wait_until(lambda: [p for p in children(server) if p not in before], 30, "the sandbox's run forked")
    [run] = [p for p in children(server) if p not in before]
    wait_until(lambda: seccomp_mode(run) == 2, 30, "the run walled in (its filter loaded)")
    assert seccomp_mode(worker) == 0 and seccomp_mode(server) == 0
    assert os.getsid(run) == run != os.getsid(worker) == os.getsid(os.getpid())  # the server's session
    sleeping.join()
    assert limit(worker, "Max core file size") == "0"
    assert limit(worker, "Max address space") != "unlimited" == limit(server, "Max address space")
    assert oom_score_adj(worker) == train_worker.WORKER_OOM_SCORE_ADJ > oom_score_adj(os.getpid())
    here = os.getpriority(os.PRIO_PROCESS, os.getpid())
    assert os.getpriority(os.PRIO_PROCESS, worker) == min(19, here + train_worker.WORKER_NICE)


def test_a_killed_fork_server_is_replaced_for_both_pools(forks, pools):
    code, trainer = pools
    old = forks.pid()
    [worker] = trainer.worker_pids()
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: not alive(old), 10, "the killed fork server dead")
    run = code.run(SEED_CODE, Limits())
    assert run.ok, run.message
    new = code.status()["pid"]
    assert new not in (None, old) and forks.pid() == new
    # The worker outlived its fork server (it is the server's); its replacement comes from the new one.
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: trainer.worker_pids() not in ([], [worker]), 120, "a new worker")
    assert parent_of(trainer.worker_pids()[0]) == new == trainer.parent_pid()


def test_a_kind_not_wanted_at_the_start_is_warmed_when_its_pool_first_asks(monkeypatch):
    """The command line loads the sandbox's pool alone: its fork server warms the sandbox only."""
    monkeypatch.setattr(client, "WANTED", {"sandbox"})
    forks = ForkServer()
    code = CodePool(slots=1, forks=forks)
    trainer = workers.TrainingPool(workers=1, max_waiting=2, forks=forks)
    try:
        assert code.run(SEED_CODE, Limits()).ok
        assert open(f"/proc/{forks.pid()}/cmdline").read().split("\0")[-2:] == ["sandbox", ""]
        assert isinstance(list(trainer.train(quick_dataset(), QUICK))[-1], training.TrainResult)
        assert parent_of(trainer.worker_pids()[0]) == forks.pid()
    finally:
        trainer.close()
        code.close()
        forks.close()


class CannotWarm:
    """A fork server whose every kind failed its warm-up: each channel says so, and nothing is forked."""

    def __init__(self) -> None:
        self.stand_in = subprocess.Popen(["sleep", "600"])  # the process a pool holds on to

    def connect(self, kind: str) -> tuple[Channel, subprocess.Popen]:
        mine, theirs = socket.socketpair()
        far = Channel(theirs, 2**20)
        far.send({"broken": f"no {kind} on this host"})
        threading.Thread(target=self._refuse, args=(far,), daemon=True).start()
        return Channel(mine, 2**20), self.stand_in

    @staticmethod
    def _refuse(far: Channel) -> None:
        while True:
            try:
                _, fds = far.recv()
            except (EOFError, OSError):
                return
            for fd in fds:
                os.close(fd)

    def close(self) -> None:
        self.stand_in.kill()
        self.stand_in.wait()


def test_a_kind_the_fork_server_cannot_warm_is_refused_with_its_reason():
    broken = CannotWarm()
    code = CodePool(slots=1, forks=broken)
    trainer = workers.TrainingPool(workers=1, max_waiting=2, forks=broken)
    try:
        run = code.run(SEED_CODE, Limits())
        assert run.status == "unavailable" and run.message == "no sandbox on this host"
        with pytest.raises((workers.TrainingRefused, workers.WorkerLost), match="no training on this host"):
            list(trainer.train(quick_dataset(), QUICK))
    finally:
        trainer.close()
        code.close()
        broken.close()
