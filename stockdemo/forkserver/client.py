"""The server's side of the fork server: the one warm process of this server, and a channel per pool.

The process is started on first use as a clean subprocess (``python -m
stockdemo.forkserver.process``): none of the server's environment (only ``clean_env``), no
file descriptor but its control socket. The server itself is never forked (it is
multi-threaded), and the process is a fresh interpreter, not a ``multiprocessing`` spawn:
spawn re-imports the server's ``__main__``, which under Streamlit is the page script being
run, so each child would run a page. The process stays in the server's session, so that
where the kernel groups tasks by session (autogroup) its training workers share the server's
group and yield to its pages by their nice; each sandbox run makes a session of its own
(``sandbox/kernel.py``).

Each pool asks ``connect(kind)`` for a channel of its own: a new socket pair whose other end
goes to the process over the control socket, served there by ``kind``'s handler. The first
message on it is ``{"ready": pid, ...}`` once the process is warm, or ``{"broken": why}``
when that kind cannot work on this host. A channel's end of file means the process has
ended: the pool's next ``connect`` starts another.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

from stockdemo import host
from stockdemo.forkserver.wire import Channel

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MAX_MESSAGE = 64 * 2**20  # a sandbox run's result: megabytes at 8,700 nodes
KINDS = ("sandbox", "training")  # the children the process can warm up for and fork
# Warmed as the process starts: each pool's module says so when it is loaded (as multiprocessing's
# forkserver is told what to preload), so a server warms both, the command line the sandbox alone.
WANTED: set[str] = set()
CONTROL_MESSAGE = 4096
STOP_S = 5.0


def want(kind: str) -> None:
    """Have the fork server warm ``kind`` when it starts; a kind asked for later is warmed then."""
    WANTED.add(kind)


def clean_env() -> dict[str, str]:
    """The fork server's whole environment: nothing of the server's (its secrets stay there), and
    no thread of its own: pandas loads pyarrow, whose jemalloc starts a background thread unless
    told not to, and a process that forks must have one thread."""
    return {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONPATH": _PACKAGE_ROOT, "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}


class ForkServer:
    """The warm process of one server: started on the first ``connect``, replaced again once it died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._control: Channel | None = None

    def connect(self, kind: str) -> tuple[Channel, subprocess.Popen]:
        """A channel of its own to the process for one pool (``kind``: "sandbox" or "training"),
        and the process it reaches (started first if none is running)."""
        mine, theirs = socket.socketpair()
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start(sorted(WANTED | {kind}))
            proc = self._proc
            try:
                self._control.send({"connect": kind}, [theirs.fileno()])
            except OSError:
                pass  # it died just now: the channel ends at once, and the pool's next connect starts another
        theirs.close()
        return Channel(mine, MAX_MESSAGE), proc

    def pid(self) -> int | None:
        """The running process's pid (None before the first start, or once it died)."""
        with self._lock:
            return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def close(self) -> None:
        """End the process (tests; a server's exit closes its control socket, which ends it too)."""
        with self._lock:
            proc, control = self._proc, self._control
            self._proc = self._control = None
        if control is not None:
            control.close()
        if proc is not None:
            try:
                proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=STOP_S)

    def _start(self, kinds: list[str]) -> None:
        if self._control is not None:
            self._control.close()
        mine, theirs = socket.socketpair()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "stockdemo.forkserver.process", str(theirs.fileno()), *kinds],
            pass_fds=(theirs.fileno(),), env=clean_env(), cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL)  # stderr: the server's log
        theirs.close()
        self._control = Channel(mine, CONTROL_MESSAGE)


SHARED: host.PerProcess[ForkServer] = host.PerProcess(ForkServer)


def shared() -> ForkServer:
    """The one fork server of this server process."""
    return SHARED.get()
