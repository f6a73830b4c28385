"""The training pool's warm parent and the workers it forks (``python -m stockdemo.train.worker --parent``).

Started by ``stockdemo.train.pool.TrainingPool``. The parent imports torch and the
training modules, trains a tiny model once (a fresh process's first run pays
seconds of one-off start-up work), freezes its heap, and then only forks: one
worker per socket the pool hands it. A worker forked from it shares its pages
(torch, the imports, the warm-up's caches) until it writes them, so each worker
costs its own run's memory, not a second torch (docs/hosting.md has the
figures). The parent is single-threaded (one torch thread, no interop pool), so
forking it is safe; it never trains a learner's run.

Parent, in: one byte and a socket (SCM_RIGHTS) per worker wanted. Out (pickled):
("warm", pid), ("forked", pid) in the order asked, ("exited", pid, returncode)
with ``subprocess``'s convention (-N: killed by signal N). A fresh interpreter,
not a ``multiprocessing`` spawn (see stockdemo/train/pool.py for why).
"""

from __future__ import annotations

import multiprocessing.connection
import os
import selectors
import signal
import socket
import sys
import traceback

from stockdemo import host

# Workers run at a lower priority than their server: when both want a core, the
# pages of every session (a place in line, a progress bar, a slider elsewhere)
# go first and training takes what is left; alone, a run goes as fast as before.
WORKER_NICE = 10
# When the host runs short of memory the kernel kills the process with the highest badness,
# its resident memory plus oom_score_adj/1000 of the limit: at 1000 any of these outranks
# the server (0), which goes only when nothing else is left (800 let a server of 500 MB
# outrank a parent just restarted in 500 MiB). Between parent and worker, the larger goes.
PARENT_OOM_SCORE_ADJ = 1000
WORKER_OOM_SCORE_ADJ = 1000
MAX_FDS = 8  # sockets taken per read: the pool asks for one worker at a time


def warm_up(threads: int) -> None:
    """Import what a run needs and train a tiny model once, in this process."""
    import torch

    # One thread per worker, one worker per core: more would only fight over the cores.
    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)  # no pool of threads in a process that forks
    from stockdemo import heap
    from stockdemo.config import TrainConfig
    from stockdemo.train import prices as data
    from stockdemo.train import training as train
    from stockdemo.train import windows

    warm = TrainConfig(source="synthetic", epochs=1)
    prices = data.synthetic_prices(warm.series, 0, days=300)
    train.run_training(windows.prepare(prices, warm.feature_names, warm.target, warm.seq_len,
                                       warm.val_pct, warm.test_pct), warm)
    heap.tune_for_serving()  # frozen: the collector never writes the pages the workers share


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


def parent_main(fd: int, threads: int) -> None:
    """The warm parent: warm up, then fork a worker per socket received until the server goes."""
    os.nice(WORKER_NICE)  # before the imports: the warm-up yields to the pages too
    host.raise_oom_score_adj(PARENT_OOM_SCORE_ADJ)
    control = socket.socket(fileno=fd)
    out = multiprocessing.connection.Connection(os.dup(fd))
    warm_up(threads)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    out.send(("warm", os.getpid()))
    try:
        while True:
            for key, _ in selector.select():
                if key.fileobj is control:
                    data, fds, _, _ = socket.recv_fds(control, MAX_FDS, MAX_FDS)
                    if not data:
                        return  # the server is gone; each worker sees its own socket close
                    for worker_fd in fds:
                        out.send(("forked", _fork(worker_fd, (control, out, selector, wake_r, wake_w))))
                else:
                    while True:
                        try:
                            if not os.read(wake_r, 512):
                                break
                        except BlockingIOError:
                            break
            _report_exits(out)
    except (EOFError, OSError):
        return


def _fork(fd: int, parents_own: tuple) -> int:
    pid = os.fork()
    if pid:
        os.close(fd)
        return pid
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control, out, selector, wake_r, wake_w = parents_own
        selector.close()
        control.close()
        out.close()
        os.close(wake_r)
        os.close(wake_w)
        host.raise_oom_score_adj(WORKER_OOM_SCORE_ADJ)
        serve(multiprocessing.connection.Connection(fd))
    except BaseException:  # noqa: BLE001 - a forked child never returns into the parent's loop
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _report_exits(out: multiprocessing.connection.Connection) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        out.send(("exited", pid, os.waitstatus_to_exitcode(status)))


if __name__ == "__main__":
    if sys.argv[1] != "--parent":
        sys.exit("usage: python -m stockdemo.train.worker --parent FD THREADS")
    parent_main(int(sys.argv[2]), int(sys.argv[3]))
