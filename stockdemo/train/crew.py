"""The training pool's workers as the server sees them: each a ``Hand``, and the ``Crew`` that gets them.

A worker is forked by the server's fork server (``stockdemo/forkserver/``) over the pool's
own channel: the crew sends one end of a new socket pair per worker wanted (SCM_RIGHTS)
with the walls the worker is to set (``train/worker.py``), and hears back, in order, each
fork's pid and, once reaped, its exit code. On a host whose memory holds no worker, a
``Hand`` is a thread of the server instead, at the workers' priority. Called with the
pool's lock held (``train/pool.py``).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass

from stockdemo import forkserver
from stockdemo.forkserver.wire import Channel
from stockdemo.train import worker as train_worker

forkserver.want("training")  # the fork server warms training as it starts


@dataclass(eq=False)
class Hand:
    """One worker: its socket, its pid and exit code once known, the run it trains."""

    conn: multiprocessing.connection.Connection
    ready: bool = False
    in_server: bool = False  # a thread of the server (a host too small for a worker)
    pid: int = 0  # once the fork server has forked it
    returncode: int | None = None  # once the fork server has reaped it (subprocess's convention)
    job: object = None  # the pool's run it is training
    stop_sent_at: float | None = None


class Crew:
    """How the pool gets workers, and what the fork server says of them."""

    def __init__(self, in_server: bool, threads: int, forks: forkserver.ForkServer | None) -> None:
        self.in_server, self.threads = in_server, threads
        self.forks = forks  # the server's shared fork server unless given
        self.link: Channel | None = None  # to it: a socket per worker wanted; pids and exit codes back
        self.broken: str | None = None  # the fork server said training cannot work here, and why
        self._server: subprocess.Popen | None = None  # the fork server the link reaches
        self._forking: deque[Hand] = deque()  # asked for, in order, pid not known yet
        self._exits: dict[int, int] = {}  # pid -> exit code

    def hire(self) -> Hand:
        """One more worker: asked of the fork server (reached first if need be), or a thread here."""
        if self.in_server:
            mine, theirs = multiprocessing.Pipe()
            threading.Thread(target=_serve_in_server, args=(theirs,), name="training", daemon=True).start()
            return Hand(mine, in_server=True)
        if self.link is None:
            self.link, self._server = (self.forks or forkserver.shared()).connect("training")
        mine, theirs = socket.socketpair()
        hand = Hand(multiprocessing.connection.Connection(mine.detach()))
        nice = min(19, os.getpriority(os.PRIO_PROCESS, os.getpid()) + train_worker.WORKER_NICE)
        try:
            self.link.send({"worker": self.threads, "nice": nice}, [theirs.fileno()])
            self._forking.append(hand)
        except OSError:
            pass  # the fork server is gone: this worker's socket closes below, and it is replaced
        theirs.close()
        return hand

    def server_pid(self) -> int | None:
        """The pid of the fork server the workers come from (None before the first or once it died)."""
        return self._server.pid if self._server is not None and self._server.poll() is None else None

    def heard(self) -> None:
        """Read what the fork server said: a worker's pid or exit code, or that training cannot work here."""
        try:
            while self.link is not None and self.link.poll():
                message, _ = self.link.recv()
                if "forked" in message and self._forking:
                    self._forking.popleft().pid = message["forked"]
                elif "exited" in message:
                    self._exits[message["exited"]] = message["code"]
                elif "broken" in message:
                    self.broken = str(message["broken"])[:500]
        except (EOFError, OSError):
            self.close()  # it died; the next worker wanted reaches another

    def exit_code(self, hand: Hand, timeout: float) -> int | None:
        """``hand``'s exit code, waiting up to ``timeout`` for the fork server to say it (None: unknown)."""
        deadline = time.monotonic() + timeout
        while hand.returncode is None:
            if hand.pid in self._exits:
                hand.returncode = self._exits.pop(hand.pid)
                break
            left = deadline - time.monotonic()
            if self.link is None or left <= 0 or not self.link.poll(left):
                break
            self.heard()
        return hand.returncode

    def let_go(self, hand: Hand) -> None:
        """Close ``hand``'s socket; kill its process unless it has ended (its exit code then known)."""
        hand.conn.close()
        if hand.pid and self.exit_code(hand, 0) is None:
            try:
                os.kill(hand.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.exit_code(hand, 2)

    def close(self) -> None:
        """Forget the fork server's channel; workers it never forked see their sockets close."""
        if self.link is not None:
            self.link.close()
        self.link = None
        self._forking.clear()


def _serve_in_server(conn: multiprocessing.connection.Connection) -> None:
    """A worker as a thread of the server: yields the core to the pages' threads, as a worker does."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), train_worker.WORKER_NICE)
    except OSError:
        pass
    train_worker.serve(conn)
