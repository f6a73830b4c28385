"""The app's server processes behind one balancer, and how many class tabs each holds.

A balancer with cookie affinity keeps each tab on the process it first reached. When a
process dies, its students reconnect to the survivors and take their cookie; when it
comes back nothing sends them back, so the survivors hold the whole class and the next
kill takes all of it at once. So every process keeps a roll in the class store: each
says every BEAT_S how many class tabs it holds; one that holds more than its fair share
by a margin asks some of its followers' tabs to reload without the affinity cookie
(``stockdemo.ui.classmode.rebalance``), and the balancer sends each to the process with the
fewest connections.

A process is on the roll from its start (``deploy/replica.py`` calls ``start_roll``),
before any tab reaches it: one just restarted holds none and is the one to fill.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Mapping

from stockdemo.classroom.errors import ClassError
from stockdemo.classroom.protocol import Classroom, open_classroom
from stockdemo.classroom.store import reachable

BEAT_S = 2.0
REPLICA_TTL_S = 6.0  # a server process not heard from for this long has gone
REPLICAS_KEY = "sd:replicas"
REPLICAS_HELD_KEY = "sd:replicas:held"  # deploy/serve.py: replicas held out of its balancer
# A process keeps a few tabs over its fair share: each move is a reload, a couple of
# seconds a student is off the teacher's page. It hands them over past a fifth of its
# share, and never fewer than 3.
MIN_EXCESS = 3
EXCESS_SHARE = 0.2
_LOGGER = logging.getLogger(__name__)


def over_share(roll: Mapping[str, int], me: str) -> int:
    """How many class tabs process ``me`` should hand over, given every live process's count.

    Its count above the fair share (the total spread evenly), when that is worth the
    reloads; else 0. ``me`` missing from the roll (not said yet): 0.
    """
    if me not in roll or len(roll) < 2:
        return 0
    fair = math.ceil(sum(roll.values()) / len(roll))
    excess = roll[me] - fair
    return excess if excess >= MIN_EXCESS and excess > EXCESS_SHARE * fair else 0


def beat(room: Classroom, replica: str, tabs: int) -> dict[str, int]:
    """Server process ``replica`` holds ``tabs`` class tabs -> every live process's count.

    Each process says so every BEAT_S (``Roll``); one not heard from for REPLICA_TTL_S has
    gone (killed, or scaled away) and is dropped from the roll. One held out of its
    balancer (``deploy/serve.py``) is left out: no tab can reach it.
    """
    now = time.time()
    db = room.db
    with reachable():
        pipe = db.pipeline(transaction=False)
        pipe.hset(REPLICAS_KEY, replica, json.dumps({"n": int(tabs), "at": now}))
        pipe.expire(REPLICAS_KEY, room.ttl_s)
        pipe.hgetall(REPLICAS_KEY)
        pipe.hgetall(REPLICAS_HELD_KEY)
        said, held = pipe.execute()[-2:]
        live: dict[str, int] = {}
        gone = []
        for name, text in said.items():
            if name in held:
                continue
            try:
                record = json.loads(text)
                n, at = int(record["n"]), float(record["at"])
            except (ValueError, KeyError, TypeError):
                n, at = 0, 0.0
            if now - at <= REPLICA_TTL_S:
                live[name] = n
            else:
                gone.append(name)
        if gone:
            db.hdel(REPLICAS_KEY, *gone)
    return live


def replica_name() -> str:
    """This process's name on the roll: ``STOCKDEMO_REPLICA`` (deploy/serve.py sets r1, r2...),
    else host and process id (a Kubernetes pod's host name is its own)."""
    return os.environ.get("STOCKDEMO_REPLICA") or f"{socket.gethostname()}-{os.getpid()}"


class Roll:
    """This process on the roll: says its count every BEAT_S and keeps the latest roll it read."""

    def __init__(self, room: Classroom, name: str) -> None:
        self.room = room
        self.name = name
        self.tabs = 0  # class tabs this process holds now (set by the class push)
        self.live: dict[str, int] = {}  # the roll as last read: process -> its tabs
        self._thread: threading.Thread | None = None

    def beat(self) -> dict[str, int]:
        """Say this process's count and read the roll once (raises ClassError if the store is down)."""
        self.live = beat(self.room, self.name, self.tabs)
        return self.live

    def over_share(self) -> int:
        return over_share(self.live, self.name)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="replica-roll", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                self.beat()
            except ClassError:
                self.live = {}  # the store is down: nobody moves until it is back
            except Exception:  # never let the thread die
                _LOGGER.exception("replica roll: one beat failed")
            time.sleep(BEAT_S)


_ROLL: Roll | None = None
_ROLL_LOCK = threading.Lock()


def start_roll(redis_url: str | None = None) -> Roll | None:
    """Put this process on the roll (once; later calls return the same). None without a shared
    class store (``STOCKDEMO_REDIS_URL`` unset: one process, nobody to share with)."""
    global _ROLL
    url = redis_url if redis_url is not None else os.environ.get("STOCKDEMO_REDIS_URL")
    with _ROLL_LOCK:
        if _ROLL is None and url:
            _ROLL = Roll(open_classroom(url), replica_name())
            _ROLL.start()
        return _ROLL
