"""One training worker process: ``python -m stockdemo.train_worker <socket fd> <torch threads>``.

Started by ``stockdemo.workers.TrainingPool``, it waits for a run on its socket, streams
the run's events back (``stockdemo.train.train``'s ``Progress`` then one ``TrainResult``),
and stops when told to. A fresh interpreter, not a ``multiprocessing`` spawn (see
stockdemo/workers.py for why).
"""

from __future__ import annotations

import multiprocessing.connection
import os
import sys
import traceback

# Workers run at a lower priority than their server: when both want a core, the
# pages of every session (a place in line, a progress bar, a slider elsewhere)
# go first and training takes what is left; alone, a run goes as fast as before.
WORKER_NICE = 10


def worker_main(conn: multiprocessing.connection.Connection, threads: int) -> None:
    """One worker: wait for a run, stream its events back, stop when told to.

    Messages in: ("train", job, dataset, config, max_seconds), ("stop", job).
    Messages out: ("ready", pid), ("event", job, event), ("refused", job, text),
    ("failed", job, traceback), ("done", job).
    """
    os.nice(WORKER_NICE)  # before the imports: a worker's start-up yields to the pages too
    import torch

    # One thread per worker, one worker per core: more would only fight over the cores.
    torch.set_num_threads(threads)
    from stockdemo import data, heap, train, windows
    from stockdemo.config import TrainConfig

    # A worker's first run pays seconds of one-off start-up work: pay it on a tiny run
    # before taking a learner's.
    warm = TrainConfig(source="synthetic", epochs=1)
    prices = data.synthetic_prices(warm.series, 0, days=300)
    train.run_training(windows.prepare(prices, warm.feature_names, warm.target, warm.seq_len,
                                       warm.val_pct, warm.test_pct), warm)
    heap.tune_for_serving()  # after the imports and the warm-up: a run's allocations are all it scans
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


if __name__ == "__main__":
    worker_main(multiprocessing.connection.Connection(int(sys.argv[1])), int(sys.argv[2]))
