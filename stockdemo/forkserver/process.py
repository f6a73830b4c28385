"""The fork server itself: one process, warmed once, that forks the sandbox's runs and training's workers.

    python -m stockdemo.forkserver.process FD KIND...   # started by client.ForkServer, never by hand

It imports torch and what each kind of child needs, runs each kind's warm-up once (its own
code, never a learner's), freezes its heap for copy-on-write, and serves: each pool's channel
(sent over the control socket on FD) is handled by its kind's handler, which forks children
with ``Loop.fork`` and hears of their end through ``exited``. Each child walls itself in: a
sandbox run as ``sandbox/child.py`` does (rlimits, Landlock, seccomp), a training worker as
``train/worker.py`` does (rlimits, its own ``oom_score_adj`` and nice). This process is
single-threaded, so forking it is safe; it never runs a learner's code or a training run.

A handler (``sandbox.watch.Runs``, ``train.worker.Workers``) is what ``handler.Handler``
declares; the loop is, to it, a ``handler.Forker``.

It ends when its server does (end of file on the control socket: no death signal, which Linux
ties to the server's thread that started it, not to the server); the sandbox's runs die with
it (theirs is tied to this single thread); training workers end when the server closes their sockets.
"""

from __future__ import annotations

import contextlib
import gc
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable

from stockdemo.forkserver import walls
from stockdemo.forkserver.client import KINDS
from stockdemo.forkserver.handler import Handler
from stockdemo.forkserver.wire import Channel

# When the host runs short of memory the kernel kills the highest badness, resident memory plus
# oom_score_adj/1000 of the limit: at 1000 this process and what it forks outrank the server
# (0), which goes only when nothing else is left.
OOM_SCORE_ADJ = 1000
# Its own work and its workers' yield to the server's pages (in the server's session, so in its
# group where the kernel groups tasks by session); the runs yield to every page past their grace
# (kernel.yield_cpu).
NICE = 10
MAX_REQUEST = 16 * 2**20  # a learner's code and its limits


class Broken:
    """A kind that cannot work on this host (its warm-up failed): says why on each channel."""

    def __init__(self, why: str, channel: Channel, loop: Loop) -> None:
        self.why, self.channel = why, channel

    def start(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.send({"broken": self.why})

    def readable(self, fd: int) -> bool:
        try:
            _, fds = self.channel.recv()
        except (EOFError, OSError):
            return False
        for each in fds:
            os.close(each)
        return True

    def exited(self, pid: int, status: int, cpu_s: float) -> None:
        pass

    def tick(self, now: float) -> float | None:
        return None

    def close(self) -> None:
        pass


# What a pool of a kind that cannot warm up here is told (its pool refuses with it).
BROKEN = {"sandbox": "The sandbox cannot start on this server: {why}",
          "training": "Training workers cannot start on this server: {why}"}


def warm(kind: str) -> Callable:
    """One kind's warm-up, in this process -> its handler's maker (``Broken`` if it failed)."""
    try:
        if kind == "sandbox":
            from stockdemo.sandbox import watch

            watch.warm_up()
            return watch.Runs
        from stockdemo.train import worker

        worker.warm_up()
        return worker.Workers
    except Exception as err:  # noqa: BLE001 - told to the kind's pools, which refuse with it
        why = BROKEN[kind].format(why=f"{type(err).__name__}: {err}")
        return lambda channel, loop: Broken(why, channel, loop)


class Loop:
    """The control socket, each pool's channel and pipes, and the children: one select loop."""

    def __init__(self, control: Channel, kinds: dict[str, Callable]) -> None:
        self.control, self.kinds = control, kinds
        self.selector = selectors.DefaultSelector()
        self.handlers: list[Handler] = []
        self.children: dict[int, Handler] = {}  # pid -> the handler that forked it
        self.wake_r, self.wake_w = os.pipe()

    def watch(self, fd: int, handler: Handler | Loop | None) -> None:
        self.selector.register(fd, selectors.EVENT_READ, handler)

    def unwatch(self, fd: int) -> None:
        self.selector.unregister(fd)

    def fork(self, handler: Handler) -> int:
        """``os.fork`` for a handler: 0 in the child (this loop's signal set-up undone), else the pid."""
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            return 0
        self.children[pid] = handler
        return pid

    def serve(self) -> None:
        """Until the server goes (end of file on the control socket)."""
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
        self.watch(self.control.fileno(), None)
        self.watch(self.wake_r, self)
        try:
            while True:
                now = time.monotonic()
                waits = [w for w in (h.tick(now) for h in self.handlers) if w is not None]
                for key, _ in self.selector.select(min(waits, default=None)):
                    if self.selector.get_map().get(key.fd) is not key:
                        continue  # closed by what this batch did before (a run reaped, its pipes drained)
                    if key.data is None:
                        if not self._connect():
                            return
                    elif key.data is not self and not key.data.readable(key.fd):
                        self._close(key.data, key.fd)
                self._reap()  # after the batch: a reaped run's pipes are drained and closed
        finally:
            for handler in self.handlers:
                handler.close()

    def _connect(self) -> bool:
        """A pool's new channel -> False once the server is gone."""
        try:
            message, fds = self.control.recv()
        except (EOFError, OSError):
            return False
        kind = message.get("connect")
        if len(fds) != 1 or kind not in KINDS:
            for fd in fds:
                os.close(fd)
            return True
        if kind not in self.kinds:  # not wanted at the start: warmed now, once
            self.kinds[kind] = warm(kind)
            gc.freeze()
        channel = Channel(socket.socket(fileno=fds[0]), MAX_REQUEST)
        handler = self.kinds[kind](channel, self)
        self.handlers.append(handler)
        self.watch(channel.fileno(), handler)
        handler.start()
        return True

    def _close(self, handler: Handler, fd: int) -> None:
        """A pool closed its channel: its handler lets its children go (the sandbox kills its runs)."""
        self.unwatch(fd)
        handler.channel.close()
        handler.close()
        self.handlers.remove(handler)

    def _reap(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_r, 512):
                pass
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            handler = self.children.pop(pid, None)
            if handler is not None:
                handler.exited(pid, status, usage.ru_utime + usage.ru_stime)


def main(fd: int, wanted: list[str]) -> None:
    """Warm the ``wanted`` kinds, then serve (see the module docstring)."""
    os.nice(NICE)  # before the imports: the warm-up yields to the pages too
    walls.raise_oom_score_adj(OOM_SCORE_ADJ)
    control = Channel(socket.socket(fileno=fd), MAX_REQUEST)
    import torch

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)  # no pool of threads in a process that forks
    kinds = {kind: warm(kind) for kind in wanted if kind in KINDS}
    gc.collect()
    gc.freeze()  # the warm heap stays shared with every child: no copy-on-write by the collector
    Loop(control, kinds).serve()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C at the server's terminal reaches its session
        main(int(sys.argv[1]), sys.argv[2:])
