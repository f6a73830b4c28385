"""A training worker: its warm-up, its walls and its loop; and the fork server's side of forking it.

Every worker is a ``fork`` of the fork server (``stockdemo/forkserver/process.py``), which has
imported torch and the training modules and trained a tiny model once (``warm_up``: a fresh
process's first run pays seconds of one-off start-up work): it shares those pages until it
writes them, so each worker costs its own run's memory, not a second torch (docs/hosting.md
has the figures). ``Workers`` is the fork server's handler of one training pool's channel:
one worker per socket the pool sends, its pid said back, and its exit code once reaped.

A worker needs none of the sandbox's walls (it runs our code, on the learner's settings), but
has its own: ``confine`` gives it the workers' priority, makes it the kernel's first choice
when memory runs short, no core file, and an address space bounded by the largest run allowed.

Channel, in: ``{"worker": threads, "nice": n}`` with the worker's socket (SCM_RIGHTS). Out:
``{"ready": pid}`` once, ``{"forked": pid}`` in the order asked, ``{"exited": pid, "code":
returncode}`` (``subprocess``'s convention: -N, killed by signal N).
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import os
import resource
import traceback

from stockdemo.forkserver import walls
from stockdemo.forkserver.handler import Forker
from stockdemo.forkserver.wire import Channel

# Workers run at a lower priority than their server: when both want a core, the
# pages of every session (a place in line, a progress bar, a slider elsewhere)
# go first and training takes what is left; alone, a run goes as fast as before.
WORKER_NICE = 10
# At 1000 a worker outranks the server (0) whatever their sizes (docs/hosting.md, "Memory short
# on purpose"): between a worker and the fork server, the larger goes.
WORKER_OOM_SCORE_ADJ = 1000
# Address space a worker may add to what it had when forked: the largest model train.too_big
# lets through, its optimizer and its batches, with room (docs/decisions.md has the figure).
WORKER_MEMORY_MB = 1024


def warm_up() -> None:
    """Import what a run needs and train a tiny model once, in this process (torch at one thread)."""
    from stockdemo.config import TrainConfig
    from stockdemo.train import prices as data
    from stockdemo.train import training as train
    from stockdemo.train import windows

    warm = TrainConfig(source="synthetic", epochs=1)
    prices = data.synthetic_prices(warm.series, 0, days=300)
    train.run_training(windows.prepare(prices, warm.feature_names, warm.target, warm.seq_len,
                                       warm.val_pct, warm.test_pct), warm)


def confine(nice: int, threads: int) -> None:
    """A worker's own walls, set in the worker just after the fork (see the module docstring)."""
    import torch

    from stockdemo import heap

    with contextlib.suppress(OSError):  # a lower nice than the fork server's needs privileges
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    walls.raise_oom_score_adj(WORKER_OOM_SCORE_ADJ)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    limit = walls.vm_bytes() + WORKER_MEMORY_MB * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    torch.set_num_threads(threads)  # one per worker, one worker per core: more would fight over them
    heap.tune_for_serving()


def serve(conn: multiprocessing.connection.Connection) -> None:
    """One worker: wait for a run, stream its events back, stop when told to.

    Messages in: ("train", job, dataset, config, max_seconds), ("stop", job).
    Messages out: ("ready", pid), ("event", job, event), ("refused", job, text),
    ("failed", job, traceback), ("done", job).
    """
    from stockdemo.train import training as train

    try:
        conn.send(("ready", os.getpid()))
        while True:
            message = conn.recv()
            if message[0] != "train":
                continue  # a stop for a run that already ended
            _, job, dataset, config, max_seconds = message
            events = train.train(dataset, config, max_seconds)
            try:
                for event in events:
                    conn.send(("event", job, event))
                    if _told_to_stop(conn, job):
                        break
            except ValueError as err:  # too_big: a message for the learner
                conn.send(("refused", job, str(err)))
            except Exception:
                conn.send(("failed", job, traceback.format_exc()))
            finally:
                events.close()
            conn.send(("done", job))
    except (EOFError, OSError):
        return  # the server closed the pipe or went away: nothing left to serve


def _told_to_stop(conn: multiprocessing.connection.Connection, job: int) -> bool:
    stop = False
    while conn.poll():
        message = conn.recv()
        stop |= message == ("stop", job)
    return stop


class Workers:
    """One training pool's channel in the fork server: a worker forked per socket it sends."""

    def __init__(self, channel: Channel, loop: Forker) -> None:
        self.channel, self.loop = channel, loop

    def start(self) -> None:
        self._send({"ready": os.getpid()})

    def readable(self, fd: int) -> bool:
        try:
            message, fds = self.channel.recv()
        except (EOFError, OSError):
            return False  # the pool is closed, or the server gone: its workers end with their sockets
        for sock in fds:
            pid = self.loop.fork(self)
            if pid == 0:
                _worker(sock, message)
            os.close(sock)
            self._send({"forked": pid})
        return True

    def exited(self, pid: int, status: int, cpu_s: float) -> None:
        self._send({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    def tick(self, now: float) -> float | None:
        return None

    def close(self) -> None:
        pass  # each worker is its server's, through its own socket

    def _send(self, message: dict) -> None:
        with contextlib.suppress(OSError):  # the pool is gone; the loop sees its end of file next
            self.channel.send(message)


def _worker(sock: int, message: dict) -> None:
    """The forked worker's whole life: only its socket kept, its walls, then serve. Never returns."""
    code = 0
    try:
        walls.keep_only(0, 1, 2, sock)  # stderr: the server's log
        confine(int(message.get("nice", WORKER_NICE)), int(message.get("worker", 1)))
        serve(multiprocessing.connection.Connection(sock))
    except BaseException:  # noqa: BLE001 - a forked child never returns into the fork server's loop
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)
