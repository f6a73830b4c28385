"""The sandbox's runs, watched from the fork server: fork, pipes read bounded, grace, wall clock.

``Runs`` is the fork server's handler of one sandbox pool's channel (``stockdemo/forkserver/process.py``).
Each run is a ``fork`` of that warm process (about 20-35 ms to a result, against 1.5-2 s for
a fresh ``import torch``): the child walls itself in and runs the code (``child.py``). Once a
run is answered, the next run's child is forked and walled in at once (a ``Spare``, for the
same limits), and waits on a pipe for its code: the fork, the walls and the copies of the pages
a run writes (``prefault``) are not in the next learner's wait. Here each child's two pipes
are read, bounded, it is lowered to the idle class once it has used its grace of CPU
(``GRACE_CPU_S``), killed with SIGKILL at the wall-clock limit. A whole result is answered
once the child has closed both pipes, before its exit; anything else once it is reaped, with
what ended it said in words (the CPU limit's SIGKILL, a crash's signal). ``warm_up`` is the
sandbox's part of the fork server's warm-up: what learners import, the seed run once.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import struct
import tempfile
import time
from dataclasses import dataclass, field

from stockdemo.forkserver.handler import Forker
from stockdemo.forkserver.wire import Channel
from stockdemo.i18n import N_
from stockdemo.sandbox import child, kernel, prefault
from stockdemo.sandbox.limits import Limits
from stockdemo.sandbox.protocol import MAX_RESULT_BYTES, BadResult, CodeError, CodeRun, check_child_result
from stockdemo.sandbox.seed import SEED_CODE
from stockdemo.sandbox.words import sentence, worded

MAX_CHILDREN = 16
# The next run's child is forked and walled in once a run is answered, and waits for its code
# on a pipe: the fork (page tables of a few hundred MB) and the walls are out of the learner's
# wait. Code longer than this goes to a child forked for it (a pipe takes this much unread).
SPARE_CODE_BYTES = 60_000
# A run's CPU at the pages' priority before it yields to them: a class's programs take 20-60 ms
# and are answered as fast as a page; an endless loop yields after this, for the rest of its run.
# Idle-class from the start, sixty runs at once on a busy box each waited seconds for a processor.
GRACE_CPU_S = 0.1
GRACE_TICK_S = 0.01  # how often a run's CPU is read while its grace lasts
READ = 65536
# The kernel's RLIMIT_CPU kill and wait4's rusage count CPU time differently: children
# killed at 2 s showed 1.92-1.96 s on a busy box. A SIGKILL this close is the limit's.
CPU_SHARE_AT_KILL = 0.9
# A run stopped by the wall clock after waiting this share of its life for a processor was
# starved by the pages (it runs in the idle class), not slow: the message says so.
BUSY_SHARE = 0.5
SIGNAL_WORDS = {
    signal.SIGSEGV: N_("a segmentation fault (memory read or written where it must not be)"),
    signal.SIGBUS: N_("a bus error (a bad memory access)"),
    signal.SIGILL: N_("an illegal instruction"),
    signal.SIGFPE: N_("an arithmetic fault"),
    signal.SIGABRT: N_("an abort"),
}


@dataclass(eq=False)
class Running:
    """One child and what it has sent so far."""

    id: int
    pid: int
    limits: Limits
    workdir: str
    started: float
    prints: int
    result: int
    printed: bytearray = field(default_factory=bytearray)
    data: bytearray = field(default_factory=bytearray)
    open_fds: set[int] = field(default_factory=set)
    killed_for: str | None = None  # "wall_s", "output_kb", "result"
    forked: float = 0.0  # when fork returned here: a starved fork server forks late
    waited_s: float = 0.0  # seconds it stood ready but got no processor (the kernel's schedstat)
    lowered: bool = False  # past its grace: idle-class (kernel.yield_cpu)
    alive_s: float = 0.0  # seconds from its fork to the wall clock's kill
    answered: bool = False  # its result went back before its exit (``Runs._closed_both``)


@dataclass(eq=False)
class Spare:
    """A child forked and walled in for ``limits`` before its code came: ``child.main`` waits for
    the code on ``request`` (the write end, here)."""

    pid: int
    limits: Limits
    workdir: str
    request: int
    prints: int
    result: int


class Runs:
    """One sandbox pool's channel in the fork server: a child forked per run it asks for."""

    def __init__(self, channel: Channel, loop: Forker) -> None:
        self.channel, self.loop = channel, loop
        self.running: dict[int, Running] = {}  # by pid
        self.pipes: dict[int, Running] = {}  # by the pipe's fd
        self.root = tempfile.mkdtemp(prefix="stockdemo-code-")
        os.chmod(self.root, 0o711)  # a child run as nobody may reach its own folder, list none
        self.landlock = kernel.landlock_abi()
        self.closed = False
        self.spare: Spare | None = None
        self.warm_pages = prefault.NONE  # what a spare writes before its code comes (``start``)

    def start(self) -> None:
        self.warm_pages = prefault.pages_written(run_seed)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        self._send({"ready": os.getpid(), "landlock": self.landlock, "rss_mb": rss_mb})

    def readable(self, fd: int) -> bool:
        if fd != self.channel.fileno():
            self._read(self.pipes[fd], fd)
            return True
        try:
            message, fds = self.channel.recv()
        except (EOFError, OSError):
            return False  # the pool is closed, or the server gone
        for each in fds:
            os.close(each)
        self._request(message)
        return True

    def tick(self, now: float) -> float | None:
        """Lower each run past its grace, kill each past its wall clock -> seconds to the next tick."""
        for r in list(self.running.values()):
            if not r.lowered and cpu_s(r.pid) >= GRACE_CPU_S:
                kernel.yield_cpu(r.pid)
                r.lowered = True
            if r.killed_for is None and now >= r.started + r.limits.wall_s:
                self._kill(r, "wall_s")
        waits = [r.started + r.limits.wall_s - now for r in self.running.values() if r.killed_for is None]
        waits += [GRACE_TICK_S for r in self.running.values() if not r.lowered]
        return max(0.0, min(waits)) if waits else None

    def exited(self, pid: int, status: int, cpu_s: float) -> None:
        if self.spare is not None and pid == self.spare.pid:  # ended before its code came
            self._drop_spare()
        run = self.running.pop(pid, None)
        if run is None:
            return
        for fd in list(run.open_fds):
            self._drain(run, fd)
        shutil.rmtree(run.workdir, ignore_errors=True)
        if not run.answered:
            self._done(run.id, outcome(run, status, cpu_s, time.monotonic() - run.started))
            self._fork_spare(run.limits)
        if self.closed and not self.running:
            shutil.rmtree(self.root, ignore_errors=True)

    def close(self) -> None:
        """The pool has gone: its runs are killed (and reaped by the loop, then cleaned up here)."""
        self.closed = True
        self._drop_spare()
        for run in self.running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(run.pid, signal.SIGKILL)
        if not self.running:
            shutil.rmtree(self.root, ignore_errors=True)

    def _request(self, message: dict) -> None:
        run_id = message.get("run")
        try:
            limits = Limits.from_dict(message["limits"])
            source = message["source"]
            if not isinstance(source, str) or len(source) > limits.code_chars:
                raise ValueError("the code is too long")
        except (ValueError, TypeError, KeyError) as err:
            self._done(run_id, CodeRun(Limits(), CodeError("unavailable", "BadRequest", str(err))))
            return
        if len(self.running) >= MAX_CHILDREN:
            self._done(run_id, CodeRun(limits, CodeError("unavailable", "SandboxBusy",
                                                         **worded(sentence("too many")))))
            return
        self._start(run_id, source, limits)

    def _start(self, run_id: int, source: str, limits: Limits) -> None:
        started = time.monotonic()
        spare = self._spare_for(source, limits)
        if spare is None:
            spare = self._fork(limits, source)
        pid, workdir, prints_r, result_r = spare.pid, spare.workdir, spare.prints, spare.result
        run = Running(run_id, pid, limits, workdir, started, prints_r, result_r,
                      open_fds={prints_r, result_r}, forked=time.monotonic())
        for fd in (prints_r, result_r):
            os.set_blocking(fd, False)
            self.pipes[fd] = run
            self.loop.watch(fd, self)
        self.running[pid] = run

    def _fork(self, limits: Limits, source: str | None) -> Spare:
        """A child for ``source``, or (None) a spare that waits for its code on ``request``."""
        workdir = tempfile.mkdtemp(dir=self.root)
        prints_r, prints_w = os.pipe()
        result_r, result_w = os.pipe()
        request_r, request_w = os.pipe() if source is None else (-1, -1)
        pid = self.loop.fork(self)
        if pid == 0:
            child.main(source, limits, prints_w, result_w, workdir, self.landlock, os.getppid(), request_r,
                       self.warm_pages)
        for fd in (prints_w, result_w, request_r):
            if fd >= 0:
                os.close(fd)
        return Spare(pid, limits, workdir, request_w, prints_r, result_r)

    def _fork_spare(self, limits: Limits) -> None:
        """The next run's child, forked now for ``limits`` (a run just answered: the next is likely alike)."""
        if self.spare is None and not self.closed and len(self.running) < MAX_CHILDREN:
            self.spare = self._fork(limits, None)

    def _spare_for(self, source: str, limits: Limits) -> Spare | None:
        """The spare, given ``source`` -> it, or None (none, other limits, code too long, or it died)."""
        spare, data = self.spare, source.encode("utf-8", "surrogatepass")
        if spare is None or spare.limits != limits or len(data) > SPARE_CODE_BYTES:
            self._drop_spare()
            return None
        self.spare = None
        try:
            os.write(spare.request, struct.pack("!I", len(data)) + data)  # fits the pipe: never blocks
        except OSError:
            self.spare = spare
            self._drop_spare()
            return None
        os.close(spare.request)
        return spare

    def _drop_spare(self) -> None:
        """Kill the spare (the loop reaps it) and let its pipes and folder go."""
        spare, self.spare = self.spare, None
        if spare is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(spare.pid, signal.SIGKILL)
        for fd in (spare.request, spare.prints, spare.result):
            os.close(fd)
        shutil.rmtree(spare.workdir, ignore_errors=True)

    def _read(self, run: Running, fd: int) -> None:
        try:
            chunk = os.read(fd, READ)
        except BlockingIOError:
            return
        if not chunk:
            self._close(run, fd)
            if not run.open_fds:
                self._closed_both(run)
        elif not self._take(run, fd, chunk):
            self._kill(run, "output_kb" if fd == run.prints else "result")

    def _take(self, run: Running, fd: int, chunk: bytes) -> bool:
        """Keep what a child sent, within bounds -> False once it sent more than it may."""
        if fd == run.prints:
            room = run.limits.output_bytes - len(run.printed)
            run.printed += chunk[:room]
            return len(chunk) <= room
        if len(run.data) + len(chunk) > MAX_RESULT_BYTES:
            return False
        run.data += chunk
        return True

    def _closed_both(self, run: Running) -> None:
        """The child closed both pipes before its exit (``child.main``): a whole result is answered
        now, not after the kernel has torn down the child's memory (10-15 ms for a torch process).
        Anything else waits for its exit, whose status says what ended it."""
        if run.killed_for is not None:
            return
        answer = outcome(run, 0, cpu_s(run.pid), time.monotonic() - run.started)
        if answer.error is None or answer.error.type != "BadResult":
            run.answered = True
            self._done(run.id, answer)
            self._fork_spare(run.limits)

    def _close(self, run: Running, fd: int) -> None:
        if fd in run.open_fds:
            self.loop.unwatch(fd)
            del self.pipes[fd]
            os.close(fd)
            run.open_fds.discard(fd)

    def _kill(self, run: Running, why: str) -> None:
        run.killed_for = why
        if why == "wall_s":
            run.waited_s, run.alive_s = waited_s(run.pid), time.monotonic() - run.forked
        with contextlib.suppress(ProcessLookupError):
            os.kill(run.pid, signal.SIGKILL)

    def _drain(self, run: Running, fd: int) -> None:
        """What a child wrote just before it ended, within bounds; then close."""
        while True:
            try:
                chunk = os.read(fd, READ)
            except BlockingIOError:
                break
            if not chunk or not self._take(run, fd, chunk):
                break
        self._close(run, fd)

    def _done(self, run_id: object, run: CodeRun) -> None:
        self._send({"done": run_id, "run": run.wire()})

    def _send(self, message: dict) -> None:
        with contextlib.suppress(OSError):  # the pool is gone; the loop sees its end of file next
            self.channel.send(message)


def outcome(run: Running, status: int, cpu_s: float, seconds: float) -> CodeRun:
    """What ended a child, in words, with what it printed and sent."""
    limits = run.limits
    printed = bytes(run.printed).decode("utf-8", "replace")
    base = {"limits": limits, "printed": printed, "seconds": seconds, "cpu_s": cpu_s}
    if run.killed_for == "wall_s":
        why = N_("your code was still running (a sleep, a wait, or a long loop?).")
        if run.waited_s >= BUSY_SHARE * run.alive_s > 0:  # not the code's fault: say so
            busy = worded(sentence("busy wait", seconds=f"{run.waited_s:.1f}"))
            stopped = limits.stopped("wall_s", busy["message"])
            return CodeRun(**base, error=CodeError("limit", "WallClockLimit", stopped, None, "wall_s",
                                                   busy["words"]))
        return CodeRun(**base, error=CodeError("limit", "WallClockLimit", limits.stopped("wall_s", why),
                                               None, "wall_s"))
    if run.killed_for == "output_kb":
        return CodeRun(**base, error=CodeError("limit", "OutputLimit", limits.stopped(
            "output_kb", N_("what your code printed first is kept.")), None, "output_kb"))
    if run.killed_for == "result":
        return CodeRun(**base, error=CodeError("crash", "BadResult", **worded(sentence("too much data"))))
    if os.WIFSIGNALED(status):
        return CodeRun(**base, error=_signalled(os.WTERMSIG(status), cpu_s, limits))
    try:
        fields = check_child_result(bytes(run.data), limits)
    except BadResult as err:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        said = worded(sentence("unreadable", code=str(code), error=str(err)))
        return CodeRun(**base, error=CodeError("crash", "BadResult", **said))
    error = fields["error"]
    return CodeRun(**base, error=None if error is None else CodeError(**error),
                   shape=None if fields["shape"] is None else tuple(fields["shape"]),
                   graph=fields["graph"], graphs=tuple(fields["graphs"]), built=fields["built"],
                   graph_freed=fields["graph_freed"],
                   refused=tuple(fields["refused"]), walls=fields["walls"])


def cpu_s(pid: int) -> float:
    """Seconds ``pid`` has run on a processor (a run has one thread)."""
    return _schedstat(pid, 0)


def waited_s(pid: int) -> float:
    """Seconds ``pid`` has stood ready to run but waited for a processor."""
    return _schedstat(pid, 1)


def _schedstat(pid: int, field: int) -> float:
    """One of /proc/PID/schedstat's times, in seconds (0.0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[field]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _signalled(sig: int, cpu_s: float, limits: Limits) -> CodeError:
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
    if sig in (signal.SIGKILL, signal.SIGXCPU) and cpu_s >= limits.cpu_s * CPU_SHARE_AT_KILL:
        return CodeError("limit", "CpuLimit", limits.stopped(
            "cpu_s", N_("your code was still computing (an endless loop?).")), None, "cpu_s")
    if sig == signal.SIGKILL:
        return CodeError("crash", "Killed", **worded(sentence("killed")))
    if sig == signal.SIGSYS:
        return CodeError("refused", "SIGSYS", **worded(sentence("sigsys")))
    what = SIGNAL_WORDS.get(sig, N_("a signal"))
    return CodeError("crash", name, **worded(sentence("native crash", what=what, signal=name)))


# What the seed's learners do next, run once here so that its lazy imports are shared by
# every fork rather than paid by each run: print a tensor, a loop of cells, backward, and a
# training loop (an optimizer imports torch._dynamo and sympy: 1.6 s of a run's 2 s of CPU),
# a scheduler, a DataLoader, torch.save and torch.load (docs/decisions.md has the memory).
WARM_UP = """
import io
from torch.utils.data import DataLoader, TensorDataset
print(predictions, predictions.shape, predictions.sum().item())
cell, h = nn.RNNCell(3, 10), torch.zeros(10, 10)
for x_t in input_data.unbind(1):
    h = torch.tanh(cell(x_t, h))
(predictions.sum() + h.sum()).backward()
print(model.fc.weight.grad, torch.arange(3), torch.tensor([True]))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
for xb, in DataLoader(TensorDataset(input_data), batch_size=5):
    opt.zero_grad()
    model(xb).pow(2).mean().backward()
    opt.step()
    sched.step()
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)
model.load_state_dict(torch.load(buffer))
"""


def warm_up() -> None:
    """Import what learners may import and run the seed once, in this process: our code only
    (torch already set to one thread by the fork server)."""
    import importlib

    for name in (*child.PRELOADED, *child.ALSO_LOADED):
        importlib.import_module(name)
    run_seed(SEED_CODE + WARM_UP)
    kernel.seccomp_filter(os.getpid(), files=True)  # libseccomp works here (built, not loaded)


def run_seed(source: str = SEED_CODE) -> None:
    """Run ``source`` (our own: the seed) as a child runs code, in this process, printing nowhere."""
    from stockdemo.sandbox.attempts import Attempts

    out = child.BoundedOutput(os.open(os.devnull, os.O_WRONLY), 2**20)
    with contextlib.redirect_stdout(out):
        child.run_source(source, Limits(), out, Attempts("/", frozenset()))
    os.close(out.fd)
