"""Training runs in worker processes, off the server's GIL, in a bounded queue.

A Streamlit server runs every session's script as a thread of one process, so
a training run in the server holds the GIL that every other session's rerun
needs: 30 presses of **Train** at once made every page of every session crawl.
Here a run happens in one of a few worker processes (forked by the fork server,
one per CPU the host gives by default; on a host too small for even one, a
thread of the server), and its session reads the same events ``stockdemo.train.training.train``
yields (``Progress`` then one ``TrainResult``), preceded by ``Queued(position)``
while every worker is busy.

- **Bounded queue.** At most ``max_waiting`` runs wait; one more is refused
  with ``TrainingRefused`` (a message for the learner), never queued forever.
- **Stop at any moment.** Closing the event stream (the page's loop ends, is
  interrupted by a rerun, or the generator is dropped) takes a waiting run out
  of the queue, or tells the worker to stop after its next report (at most
  ``train.HEARTBEAT_S`` apart); a worker that does not stop within
  ``STOP_GRACE_S`` is killed and replaced.
- **A closed tab frees its worker.** Reading events is the session's
  heartbeat: a stream nobody has read for ``abandon_after`` seconds is
  cancelled as if it had been closed. A worker whose server went away sees its
  pipe close and exits.
- **A crashed worker** (killed, out of memory, a crash in native code) ends
  that one session's stream with ``WorkerLost`` and is replaced; other
  sessions and the server carry on.

The pool starts its workers in the background (``start``), so a page can warm
it without waiting for each worker's ``import torch``; runs submitted before a
worker is ready wait in the queue like any other.

Workers are forked by the server's fork server (``stockdemo/forkserver/``), which has imported
torch and trained once: each worker shares its pages and costs only its own run's memory,
not a second torch (``crew.py`` asks for them). Under memory pressure the kernel kills a
worker or the fork server before the server (their ``oom_score_adj``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from stockdemo import forkserver, host
from stockdemo.config import MAX_TRAIN_SECONDS
from stockdemo.train.crew import Crew, Hand
from stockdemo.train.training import TrainResult

STOP_GRACE_S = 5.0  # a worker told to stop that has not stopped by then is killed
ABANDON_S = 15.0  # an event stream unread this long is taken as a closed tab
QUEUED_REPEAT_S = 1.0  # a waiting session hears its place at least this often
DEFAULT_MAX_WAITING = 32  # a class of 30 pressing Train at once all get a place in line
# A worker ended by one of these was stopped with its server (make serve stops each
# replica's process group; Ctrl-C signals the terminal's): its server is most likely
# exiting too, so it is replaced after a pause, if the server is still there.
STOP_SIGNALS = frozenset({-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP})
RESPAWN_AFTER_STOP_S = 3.0
FAILED_STARTS = 3  # workers dying before they are ready, in a row: the pool gives up


@dataclass(frozen=True)
class Queued:
    """Every worker is busy: this run is ``position`` in line (1 = next to start)."""

    position: int
    workers: int


class TrainingRefused(Exception):
    """The queue is full: the learner is told to try again later."""


class WorkerLost(Exception):
    """The worker training this run died (killed, out of memory, crashed)."""


def default_workers() -> int:
    """``STOCKDEMO_TRAIN_WORKERS`` if set (0: in the server), else what the host holds
    (``host.training_workers``: one per CPU of its cgroup's quota, fewer where memory is short,
    none below the memory a worker's torch needs)."""
    raw = os.environ.get("STOCKDEMO_TRAIN_WORKERS", "").strip()
    return int(raw) if raw.isdigit() else host.training_workers()


def default_max_waiting() -> int:
    return max(0, int(os.environ.get("STOCKDEMO_TRAIN_QUEUE", DEFAULT_MAX_WAITING)))


# --- The pool, in the server --------------------------------------------------------

@dataclass(eq=False)
class _Job:
    id: int
    work: tuple  # (dataset, config, max_seconds)
    events: queue.Queue = field(default_factory=queue.Queue)
    position: int = 0
    cancelled: bool = False
    last_read: float = field(default_factory=time.monotonic)


class TrainingPool:
    """``workers`` training processes shared by every session of one server.

    ``workers=0``: one run at a time in a thread of this process, for a host whose memory
    holds not even one forked worker (``host.training_workers``; docs/hosting.md). Runs there
    share the server's GIL, which one CPU shares anyway.
    """

    def __init__(self, workers: int | None = None, max_waiting: int | None = None,
                 abandon_after: float = ABANDON_S, torch_threads: int = 1,
                 forks: forkserver.ForkServer | None = None):
        wanted = default_workers() if workers is None else workers
        self.in_server = wanted == 0
        self.workers = max(1, wanted)
        self.max_waiting = default_max_waiting() if max_waiting is None else max_waiting
        self.abandon_after = abandon_after
        self._lock = threading.Lock()
        self._pool: list[Hand] = []
        self._waiting: deque[_Job] = deque()
        self._ids = itertools.count(1)
        self._wake_read, self._wake_write = multiprocessing.Pipe(duplex=False)
        self._dispatcher: threading.Thread | None = None
        self._closed = False
        self._failed_starts = 0
        self._broken: str | None = None
        self._respawn_at: list[float] = []  # replacements due for workers stopped by a signal
        self._crew = Crew(self.in_server, torch_threads, forks)

    # -- public --

    def start(self) -> None:
        """Start the workers and the dispatcher in the background; returns at once."""
        with self._lock:
            if self._dispatcher is not None or self._closed:
                return
            self._pool = [self._crew.hire() for _ in range(self.workers)]
            self._dispatcher = threading.Thread(target=self._dispatch, name="training-pool",
                                                daemon=True)
            self._dispatcher.start()

    def train(self, dataset, config, max_seconds: float = MAX_TRAIN_SECONDS) -> Iterator:
        """Queue one run: yields Queued while waiting, then train.train's Progress and TrainResult.

        Raises TrainingRefused when the queue is full, ValueError when the model
        is too big to train (train.too_big), WorkerLost when its worker dies.
        Closing the generator early cancels the run.
        """
        self.start()
        job = self._submit((dataset, config, max_seconds))
        try:
            while True:
                try:
                    kind, payload = job.events.get(timeout=QUEUED_REPEAT_S)
                except queue.Empty:
                    kind, payload = "queued", None
                job.last_read = time.monotonic()
                if kind == "queued":
                    if job.position:
                        yield Queued(job.position, self.workers)
                elif kind == "event":
                    yield payload
                    if isinstance(payload, TrainResult):
                        return
                elif kind == "refused":
                    raise ValueError(payload)
                elif kind == "lost":
                    raise WorkerLost(payload)
                elif kind == "done":
                    return
        finally:
            self._cancel(job)

    def status(self) -> dict[str, int]:
        """Workers started and ready, runs training and waiting: for tests and the load bench."""
        with self._lock:
            return {"workers": len(self._pool), "ready": sum(w.ready for w in self._pool),
                    "running": sum(w.job is not None for w in self._pool),
                    "waiting": len(self._waiting)}

    def worker_pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in self._pool if w.ready and w.pid]

    def parent_pid(self) -> int | None:
        """The pid of the fork server the workers come from (None before the first start or after it died)."""
        with self._lock:
            return self._crew.server_pid()

    def close(self) -> None:
        """Stop the dispatcher and every worker (tests; a server's exit ends them anyway)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, []
            waiting, self._waiting = list(self._waiting), deque()
        self._wake()
        if self._dispatcher is not None:
            self._dispatcher.join(timeout=5)
        for job in waiting:
            job.events.put(("lost", "The training service was shut down."))
        for w in pool:
            if w.job is not None:
                w.job.events.put(("lost", "The training service was shut down."))
            w.conn.close()  # the worker sees the pipe close and exits
        with self._lock:
            for w in pool:
                if w.pid and self._crew.exit_code(w, 2) is None:
                    self._crew.let_go(w)
            self._crew.close()

    # -- session side --

    def _submit(self, work: tuple) -> _Job:
        with self._lock:
            if self._closed:
                raise TrainingRefused("The training service is shutting down. Try again in a minute.")
            if self._broken:
                raise TrainingRefused(self._broken)
            free = sum(w.ready and w.job is None for w in self._pool)
            if len(self._waiting) >= self.max_waiting + free:
                raise TrainingRefused(
                    f"Every training worker is busy and {len(self._waiting)} runs are already "
                    "waiting. Try again in a minute.")
            job = _Job(next(self._ids), work)
            self._waiting.append(job)
            job.position = len(self._waiting)
            if not free:
                job.events.put(("queued", None))  # the learner sees a place in line at once
        self._wake()
        return job

    def _cancel(self, job: _Job) -> None:
        with self._lock:
            job.cancelled = True
            if job in self._waiting:
                self._waiting.remove(job)
                self._renumber()
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_write.send_bytes(b"")
        except OSError:
            pass  # closed: the dispatcher has gone

    # -- dispatcher thread --

    def _renumber(self) -> None:
        for i, job in enumerate(self._waiting, 1):
            if job.position != i:
                job.position = i
                job.events.put(("queued", None))

    def _dispatch(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                watched = {self._wake_read: None}
                if self._crew.link is not None:
                    watched[self._crew.link] = None
                for w in self._pool:
                    watched[w.conn] = w  # a worker that dies closes its end: readable, then EOF
            ready = multiprocessing.connection.wait(list(watched), timeout=0.5)
            with self._lock:
                if self._closed:
                    return
                for obj in ready:
                    if obj is self._wake_read:
                        while self._wake_read.poll():
                            self._wake_read.recv_bytes()
                        continue
                    if obj is self._crew.link:
                        self._crew.heard()
                        continue
                    w = watched[obj]
                    if w in self._pool:
                        self._serve(w)
                self._check_stops()
                self._respawn_due()
                self._assign()

    def _respawn_due(self) -> None:
        now = time.monotonic()
        due = [t for t in self._respawn_at if t <= now]
        if due:
            self._respawn_at = [t for t in self._respawn_at if t > now]
            self._pool.extend(self._crew.hire() for _ in due)

    def _serve(self, w: Hand) -> None:
        """Read what one worker sent, or replace it if it died."""
        try:
            while w.conn.poll():
                self._receive(w, w.conn.recv())
            return
        except (EOFError, OSError):
            pass
        code = self._crew.exit_code(w, 1)  # its socket closes just before it is reaped
        if self._crew.broken:
            why = self._crew.broken
        elif code == -signal.SIGKILL:  # from outside: the kernel's out-of-memory killer, most likely
            why = (f"The training worker stopped unexpectedly (exit code {code}): it was killed, most "
                   "likely because the server ran short of memory; try a shorter run (fewer epochs, "
                   "a shorter sequence or a smaller model). The server has started a new worker.")
        else:
            why = (f"The training worker stopped unexpectedly (exit code {code}). Your run was lost; "
                   "the server has started a new worker: press Train to try again.")
        self._replace(w, why)

    def _receive(self, w: Hand, message: tuple) -> None:
        kind = message[0]
        if kind == "ready":
            w.ready, w.pid = True, 0 if w.in_server else message[1]  # never our own pid to kill
            self._failed_starts = 0
            return
        job = w.job
        if job is None or message[1] != job.id:
            return
        if kind == "event":
            if not job.cancelled:
                job.events.put(("event", message[2]))
        elif kind == "refused":
            job.events.put(("refused", message[2]))
        elif kind == "failed":
            job.events.put(("lost", "Training failed inside the worker:\n" + message[2]))
        elif kind == "done":
            job.events.put(("done", None))
            w.job, w.stop_sent_at = None, None

    def _replace(self, w: Hand, why: str) -> None:
        if w.job is not None:
            w.job.events.put(("lost", why))
        self._crew.let_go(w)
        if w.returncode in STOP_SIGNALS:
            self._pool.remove(w)
            self._respawn_at.append(time.monotonic() + RESPAWN_AFTER_STOP_S)
            return
        self._failed_starts += not w.ready
        if self._failed_starts < FAILED_STARTS and not self._crew.broken:
            self._pool[self._pool.index(w)] = self._crew.hire()
            return
        # Workers die before they can even start, or the fork server said why: respawning would only spin.
        self._pool.remove(w)
        self._broken = self._crew.broken or (f"Training workers cannot start on this server (exit code "
                                        f"{w.returncode}); the server's log says why.")
        if not self._pool:
            while self._waiting:
                self._waiting.popleft().events.put(("lost", self._broken))

    def _check_stops(self) -> None:
        """Send stop for cancelled or abandoned runs; kill workers that ignore it."""
        now = time.monotonic()
        for w in list(self._pool):
            job = w.job
            if job is None:
                continue
            if not job.cancelled and now - job.last_read > self.abandon_after:
                job.cancelled = True  # nobody has read its events: the tab is gone
            if not job.cancelled:
                continue
            if w.stop_sent_at is None:
                w.stop_sent_at = now
                try:
                    w.conn.send(("stop", job.id))
                except OSError:
                    self._replace(w, "The training worker went away.")
            elif now - w.stop_sent_at > STOP_GRACE_S:
                self._replace(w, "The training run did not stop in time; its worker was restarted.")
        now = time.monotonic()
        for job in [j for j in self._waiting if now - j.last_read > self.abandon_after]:
            self._waiting.remove(job)
            job.cancelled = True
        self._renumber()

    def _assign(self) -> None:
        for w in self._pool:
            if not self._waiting:
                return
            if w.ready and w.job is None:
                job = self._waiting.popleft()
                dataset, config, max_seconds = job.work
                try:
                    w.conn.send(("train", job.id, dataset, config, max_seconds))
                except OSError:
                    self._waiting.appendleft(job)
                    self._replace(w, "")
                    continue
                w.job, job.position = job, 0
        self._renumber()


def _started() -> TrainingPool:
    made = TrainingPool()
    made.start()
    return made


SHARED: host.PerProcess[TrainingPool] = host.PerProcess(_started)


def shared_pool() -> TrainingPool:
    """The one pool of this server process, created and started on first use."""
    return SHARED.get()
