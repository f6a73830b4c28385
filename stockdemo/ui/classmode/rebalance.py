"""Class mode across replicas: a process holding more than its share of a class's tabs asks
some of its followers to reload elsewhere (``stockdemo.classroom.replicas`` keeps the roll)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from stockdemo.classroom import replicas
from stockdemo.ui import compat

# At most this many tabs asked to move at once, and none again before the moved ones have
# reloaded elsewhere and the roll has counted them there.
MOVE_BATCH = 10
MOVE_COOLDOWN_S = 3 * replicas.BEAT_S
# ...and only an imbalance that lasts: while a class joins, the roll lags the balancer,
# which spreads the tabs itself.
SUSTAINED_S = 3 * replicas.BEAT_S
_LOGGER = logging.getLogger(__name__)


class Rebalancing:
    """The part of the push thread (``push.Pusher``) that keeps the class spread over replicas."""

    lock: threading.Lock
    seats: dict[str, tuple[str, bool]]  # session id -> (seat, following)
    push: Callable[..., None]  # Pusher.push: rerun a tab's parts

    def __init__(self) -> None:
        self.roll: replicas.Roll | None = None  # this process on the replica roll, if shared
        self.moving: dict[str, float] = {}  # session id -> when its tab was asked to move
        self.told: set[str] = set()  # ...and those whose bar has drawn the move
        self.moved_at = -MOVE_COOLDOWN_S
        self.over_since: float | None = None  # when this process last went over its share

    def balance(self, present: dict[str, list[tuple[str, bool]]], watched: dict[str, dict[str, dict]],
                versions: dict[str, tuple[int, tuple[str, ...]]]) -> None:
        """Say this process's class tabs on the roll; above its share, ask some followers to move.

        A move reloads the tab, a couple of seconds off the teacher's page: never the
        teacher's, never one exploring on its own, never while its class has a question
        open (the answer is kept, but a half-typed one is not).
        """
        if self.roll is None:
            return
        now = time.monotonic()
        alive = compat.alive()
        with self.lock:  # a moved tab has left (its session closed) or had its time
            self.moving = {sid: at for sid, at in self.moving.items()
                           if sid in self.seats and alive(sid) and now - at < MOVE_COOLDOWN_S}
            self.told &= set(self.moving)
        self.roll.tabs = sum(len(seats) for seats in present.values())
        excess = self.roll.over_share()
        if not excess:
            self.over_since = None
            return
        if self.over_since is None:
            self.over_since = now
        if now - self.over_since < SUSTAINED_S or now - self.moved_at < MOVE_COOLDOWN_S:
            return
        with self.lock:
            seats = dict(self.seats)
        asked = []
        for code, sessions in watched.items():
            _, bar = versions.get(code, (0, ()))
            if len(bar) > 3 and bar[2] and bar[3] == "0":
                continue  # a question is open
            for sid, parts in sessions.items():
                if len(asked) < min(excess, MOVE_BATCH) and seats.get(sid, ("", False))[1] \
                        and "bar" in parts and sid not in self.moving:
                    asked.append((sid, parts["bar"]))
        if not asked:
            return
        self.moved_at = now
        with self.lock:
            self.moving.update((sid, now) for sid, _ in asked)
        for sid, bar in asked:
            self.push(sid, [("bar", 0.0, bar, None)])
        _LOGGER.info("class push: %d tabs asked to move to another replica (%d over the share)",
                     len(asked), excess)

    def move_asked(self, session_id: str) -> bool:
        """Whether this tab was asked to reload elsewhere (``balance``); said once."""
        with self.lock:
            if session_id not in self.moving or session_id in self.told:
                return False
            self.told.add(session_id)
            return True
