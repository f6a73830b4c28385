"""The server's side of the sandbox: a bounded queue of runs for the fork server.

``run_code(source)`` is the one call the page (and the command line) makes:
it blocks until the run's ``CodeRun`` is back and never raises. Runs wait in
a queue when every place is taken (``slots`` runs at once, one per core by
default). A class presses Run together, so the queue is fair between sessions
(``who``): each session has at most one run in the sandbox at a time, the
places go round the sessions with runs waiting, and a waiting learner is told
where they stand (``on_wait``). A run is refused at once, with a message, only
for real overload: when the wait it would meet is longer than a learner waits
(``expected_wait`` over ``MAX_WAIT_S``), when a session sends faster than a person
(``PER_SESSION`` runs pending), or past ``max_waiting`` waiting runs.

Runs are forked by the server's fork server (``stockdemo/forkserver/``), asked
over a channel of the pool's own on the first run; ``watch.py`` is its side of
them. A fork server that dies is replaced on the next run; the runs it held end
with a message saying so. One that dies before it is ready three times in a row,
or says the sandbox cannot work here (say, no libseccomp on the host), makes the
pool refuse every run with the reason: code is never run without the sandbox.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from stockdemo import forkserver, host
from stockdemo.forkserver.wire import Channel
from stockdemo.sandbox.limits import OFF_MESSAGE, Limits, code_enabled
from stockdemo.sandbox.protocol import BadResult, CodeError, CodeRun, unavailable
from stockdemo.sandbox.words import sentence, worded

START_S = 120.0  # the fork server's import torch and warm-up, on a busy box
FAILED_STARTS = 3
DEFAULT_MAX_WAITING = 120  # a class of 60 pressing Run twice; the expected wait refuses first
PER_SESSION = 2  # runs one session may have pending (one in the sandbox, one waiting): a person's
# A wait a learner sits through, told their place in the queue; a longer one is refused. Not the
# run's wall-clock limit: on a busy box sixty runs at once wait longer than that, and were refused.
MAX_WAIT_S = 30.0
RUN_S = 0.1  # a run's seconds in a place before any was timed (fork to result, a learner's code)
TIMED = 20  # recent runs whose seconds make the estimate
WAIT_TICK_S = 0.5  # how often a waiting run's caller hears where it stands
SERVED_KEPT = 4096  # sessions whose last turn is remembered
END_S = 5.0  # a fork server whose channel ended is reaped within this, for the words of its end

forkserver.want("sandbox")  # the fork server warms the sandbox's runs as it starts


def _env_int(name: str, default: int, low: int, high: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ValueError(f"{name}={raw[:32]!r}: give a whole number from {low} to {high}.")
    return int(raw)


def default_slots() -> int:
    """``STOCKDEMO_CODE_WORKERS``, else what the host holds (``host.sandbox_places``: one run at
    a time per CPU of its cgroup's quota, fewer where memory is short)."""
    return _env_int("STOCKDEMO_CODE_WORKERS", host.sandbox_places(), 1, 64)


def default_max_waiting() -> int:
    return _env_int("STOCKDEMO_CODE_QUEUE", DEFAULT_MAX_WAITING, 0, 1000)


@dataclass(eq=False)
class _Job:
    id: int
    source: str
    limits: Limits
    who: str | None = None  # the session that sent it (None: a caller of its own, e.g. the CLI)
    submitted: float = field(default_factory=time.monotonic)
    sent: float | None = None
    done: threading.Event = field(default_factory=threading.Event)
    run: CodeRun | None = None

    def finish(self, run: CodeRun) -> None:
        if self.run is None:
            self.run = run
            self.done.set()


class CodePool:
    """The sandbox of one server process: a queue of runs for the fork server (``forks``, the
    server's shared one unless given)."""

    def __init__(self, slots: int | None = None, max_waiting: int | None = None,
                 max_wait_s: float = MAX_WAIT_S, forks: forkserver.ForkServer | None = None) -> None:
        self.forks = forks
        self.slots = slots or default_slots()
        self.max_waiting = default_max_waiting() if max_waiting is None else max_waiting
        self.max_wait_s = max_wait_s
        self.info: dict = {}  # the fork server's "ready" message: pid, landlock, rss_mb
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiting: deque[_Job] = deque()
        self._running: dict[int, _Job] = {}
        self._times: deque[float] = deque(maxlen=TIMED)  # recent runs' seconds in a place
        self._served: dict[str, int] = {}  # session -> when its last run was sent (a count)
        self._sends = itertools.count()
        self._proc: subprocess.Popen | None = None
        self._conn: Channel | None = None
        self._ready = False
        self._broken: dict | None = None  # why the sandbox cannot start (words.worded's fields)
        self._failed_starts = 0
        self._closed = False

    # -- public --

    def start(self) -> None:
        """Start the fork server now, in the background (a page may warm the pool early)."""
        with self._lock:
            if self._proc is None and not self._closed and not self._broken:
                self._spawn()

    def run(self, source: str, limits: Limits, who: str | None = None,
            on_wait: Callable[[int], None] | None = None) -> CodeRun:
        """Queue one run and wait for it -> CodeRun. Never raises.

        ``who``: the session that sends it, for fairness (None: its own). ``on_wait(ahead)``
        is called about every half second while the run waits for a place, with the number
        of runs that will go before it.
        """
        with self._lock:
            refusal = self._refusal(who, limits)
            if refusal is not None:
                return unavailable(limits, refusal, "SandboxBusy")
            job = _Job(next(self._ids), source, limits, who)
            ahead = len(self._waiting) + len(self._running)
            self._waiting.append(job)
            if self._proc is None:
                self._spawn()
            self._dispatch()
        patience = START_S + (ahead // self.slots + 2) * (limits.wall_s + 2)
        deadline = time.monotonic() + patience
        while on_wait is not None and not job.done.wait(WAIT_TICK_S) and time.monotonic() < deadline:
            with self._lock:
                place = self._place(job)
            if place is None:
                break  # in the sandbox now
            try:
                on_wait(place)
            except Exception:  # noqa: BLE001 - the caller's display must not lose the run
                on_wait = None
        if not job.done.wait(max(0.0, deadline - time.monotonic())):
            with self._lock:
                if job in self._waiting:
                    self._waiting.remove(job)
            job.finish(unavailable(limits, worded(sentence("no answer")), "SandboxTimeout"))
        return job.run

    def expected_wait(self) -> float:
        """Seconds a run sent now would wait for a place: the runs before it over the places,
        at the recent runs' median time."""
        with self._lock:
            return self._expected_wait()

    def status(self) -> dict:
        with self._lock:
            return {"ready": self._ready, "running": len(self._running), "waiting": len(self._waiting),
                    "slots": self.slots, "pid": self._proc.pid if self._proc else None,
                    "broken": self._broken and self._broken["message"]}

    def close(self) -> None:
        """Close the pool's channel (the fork server kills its runs) and end every run with a message."""
        with self._lock:
            self._closed = True
            conn = self._conn
            self._proc = self._conn = None
            jobs = [*self._waiting, *self._running.values()]
            self._waiting.clear()
            self._running.clear()
        for job in jobs:
            job.finish(unavailable(job.limits, worded(sentence("shut down"))))
        if conn is not None:
            conn.close()

    # -- with the lock held --

    def _refusal(self, who: str | None, limits: Limits) -> dict | None:
        """Why a run is turned away (``words.worded``'s fields), or None."""
        if self._closed:
            return worded(sentence("shutting down"))
        if self._broken:
            return self._broken
        if len(self._waiting) >= self.max_waiting + max(0, self.slots - len(self._running)):
            return worded(sentence("full", waiting=len(self._waiting)))
        if who is not None and self._pending(who) >= PER_SESSION:
            return worded(sentence("yours waiting"))
        wait = self._expected_wait()
        if wait > self.max_wait_s:
            return worded(sentence("busy", seconds=round(wait)))
        return None

    def _pending(self, who: str) -> int:
        return sum(j.who == who for j in (*self._waiting, *self._running.values()))

    def _expected_wait(self) -> float:
        ahead = len(self._waiting) + len(self._running) - self.slots + 1
        if ahead <= 0:
            return 0.0
        each = sorted(self._times)[len(self._times) // 2] if self._times else RUN_S
        return ahead / self.slots * each

    def _next(self) -> _Job | None:
        """The waiting run to send next: of the sessions with nothing in the sandbox, the one
        served longest ago (or never), its oldest run."""
        busy = {j.who for j in self._running.values() if j.who is not None}
        ready = [j for j in self._waiting if j.who is None or j.who not in busy]
        return min(ready, key=lambda j: self._served.get(j.who, -1) if j.who is not None else -1,
                   default=None)

    def _place(self, job: _Job) -> int | None:
        """How many waiting runs go before ``job`` (None once it is in the sandbox): the places go
        round the sessions in turn, so a session's second run waits for every other's first."""
        if job not in self._waiting:
            return None
        turns: dict[str | None, int] = {}
        order = []
        for k, other in enumerate(self._waiting):
            turn = turns[other.who] = turns.get(other.who, -1) + 1 if other.who is not None else 0
            order.append(((turn, k), other))
        mine = next(rank for rank, other in order if other is job)
        return sum(rank < mine for rank, _ in order)

    def _spawn(self) -> None:
        self._conn, self._proc = (self.forks or forkserver.shared()).connect("sandbox")
        self._ready = False
        threading.Thread(target=self._listen, args=(self._proc, self._conn), name="sandbox-pool",
                         daemon=True).start()

    def _dispatch(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return  # ended (its socket may still take a request while it dies): its listener replaces it
        while self._ready and len(self._running) < self.slots and (job := self._next()) is not None:
            self._waiting.remove(job)
            message = {"run": job.id, "source": job.source, "limits": job.limits.to_dict()}
            try:
                self._conn.send(message)
            except OSError:
                self._waiting.appendleft(job)  # the fork server is gone: its listener restarts it
                return
            job.sent = time.monotonic()
            self._running[job.id] = job
            if job.who is not None:
                self._served[job.who] = next(self._sends)
                if len(self._served) > SERVED_KEPT:  # sessions long gone: the oldest half
                    for who in sorted(self._served, key=self._served.get)[:SERVED_KEPT // 2]:
                        del self._served[who]

    # -- the listener thread, one per channel --

    def _listen(self, proc: subprocess.Popen, conn: Channel) -> None:
        while True:
            try:
                message, _ = conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                self._receive(message)
            del message  # a run's wire form (megabytes at 8,700 nodes) is not kept while the next is awaited
        with self._lock:
            if self._conn is not conn:
                return  # closed by the pool itself
        try:
            proc.wait(timeout=END_S)
        except subprocess.TimeoutExpired:
            pass  # its words say "exit code None"
        with self._lock:
            if self._conn is conn:
                self._lost(proc)

    def _receive(self, message: dict) -> None:
        if "ready" in message:
            self._ready, self._failed_starts = True, 0
            self.info = {k: message.get(k) for k in ("ready", "landlock", "rss_mb")}
        elif "broken" in message:
            self._broken = {"message": str(message["broken"])[:500]}  # the fork server's own words
            for job in self._waiting:
                job.finish(unavailable(job.limits, self._broken))
            self._waiting.clear()
        elif "done" in message:
            job = self._running.pop(message["done"], None)
            if job is not None:
                try:
                    run = CodeRun.from_wire(message["run"], job.limits, job.sent - job.submitted)
                except (BadResult, KeyError, TypeError) as err:
                    run = CodeRun(job.limits, CodeError("crash", "BadResult",
                                                        **worded(sentence("bad result", error=str(err)))))
                self._times.append(time.monotonic() - job.sent)
                job.finish(run)
        self._dispatch()

    def _lost(self, proc: subprocess.Popen) -> None:
        """The fork server died: end its runs with a message; replace it if runs are waiting."""
        why = _ended("restarted", proc.returncode)
        for job in self._running.values():
            job.finish(CodeRun(job.limits, CodeError("crash", "SandboxRestarted", **why)))
        self._running.clear()
        self._failed_starts += not self._ready
        self._proc, self._conn, self._ready = None, None, False
        if self._failed_starts >= FAILED_STARTS and not self._broken:
            self._broken = _ended("cannot start", proc.returncode)
        if self._broken or self._closed:
            for job in self._waiting:
                job.finish(unavailable(job.limits, self._broken or worded(sentence("shut down"))))
            self._waiting.clear()
        elif self._waiting:
            self._spawn()


def _ended(key: str, returncode: int | None) -> dict:
    """``key``'s sentence for how the warm process ended: a SIGKILL on a host short of memory is
    the kernel's (``key``, killed)."""
    if returncode == -9:
        return worded(sentence(f"{key}, killed"))
    return worded(sentence(key, code=str(returncode)))


SHARED: host.PerProcess[CodePool] = host.PerProcess(CodePool)


def shared_pool() -> CodePool:
    """The one pool of this server process, created on first use."""
    return SHARED.get()


def run_code(source: str, limits: Limits | None = None, who: str | None = None,
             on_wait: Callable[[int], None] | None = None) -> CodeRun:
    """Run a learner's script in the sandbox -> CodeRun (the page's one call). Never raises.

    ``who``, ``on_wait``: the session sending it, and what to tell it while it waits
    (``CodePool.run``).

    ``limits``: None for the operator's (``Limits.from_env``). Refused without
    running: the feature turned off (``STOCKDEMO_CODE=off``), code over the length
    limit, a full queue, an operator's setting that is not valid.
    """
    try:
        limits = limits or Limits.from_env()
    except ValueError as err:
        return unavailable(Limits(), worded(sentence("settings", error=str(err))), "SandboxSettings")
    if not code_enabled():
        return unavailable(limits, OFF_MESSAGE, "CodeTurnedOff")
    if not isinstance(source, str):
        return unavailable(limits, f"The code must be text, not {type(source).__name__}.", "BadCode")
    if len(source) > limits.code_chars:
        long = worded(sentence("code length", chars=len(source)))
        stopped = {**long, "message": limits.stopped("code_chars", long["message"])}
        return unavailable(limits, stopped, "CodeTooLong", "code_chars")
    try:
        return shared_pool().run(source, limits, who, on_wait)
    except ValueError as err:  # STOCKDEMO_CODE_WORKERS / _QUEUE not valid
        return unavailable(limits, worded(sentence("settings", error=str(err))), "SandboxSettings")
