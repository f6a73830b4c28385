"""What the fork server's loop and a kind's handler give each other (``process.py``'s ``Loop``;
``sandbox/watch.py``'s ``Runs``, ``train/worker.py``'s ``Workers``)."""

from __future__ import annotations

from typing import Protocol

from stockdemo.forkserver.wire import Channel


class Forker(Protocol):
    """The loop, as a handler sees it."""

    def watch(self, fd: int, handler: Handler) -> None:
        """Call ``handler.readable(fd)`` whenever ``fd`` can be read."""

    def unwatch(self, fd: int) -> None:
        """No more calls for ``fd`` (before it is closed)."""

    def fork(self, handler: Handler) -> int:
        """``os.fork``: 0 in the child, else its pid, whose end goes to ``handler.exited``."""


class Handler(Protocol):
    """One pool's channel in the fork server."""

    channel: Channel

    def start(self) -> None:
        """Say ``ready`` (or why not) on the channel."""

    def readable(self, fd: int) -> bool:
        """Read the channel or a child's pipe -> False once the channel has ended."""

    def exited(self, pid: int, status: int, cpu_s: float) -> None:
        """A child of this handler was reaped: ``wait4``'s status and its CPU seconds."""

    def tick(self, now: float) -> float | None:
        """Timed work (a wall clock) -> seconds until the next tick is needed, or None."""

    def close(self) -> None:
        """The pool closed its channel: let its children go."""
