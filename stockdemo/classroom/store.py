"""Where a class's state lives: the few Redis commands class mode uses, and their stand-in.

``Classroom`` (stockdemo/classroom/protocol.py) runs over either store, with the same
calls and the same answers:

- ``MemoryStore``: a dict with expiry times in this process (``make run``); values are
  kept as strings, as Redis returns them with ``decode_responses``;
- ``redis.Redis``: replicas (``make serve``) sharing one redis-server (``connect``).

Keys of class CODE; all expire with the class (``Classroom.ttl_s`` after its last activity):

    sd:class:CODE              hash: key_hash, version, page, params, step, question,
                               opened_at, deadline, revealed, answer, seats, lesson (its digest;
                               "" for ours)
    sd:class:CODE:lesson       hash: text -> the class's lesson, as its teacher gave it (TOML,
                               at most lessons.schema.MAX_BYTES); none for ours
    sd:class:CODE:answers:N    hash: seat -> {"a": answer, "s": seconds to answer} (HSETNX: one per seat)
    sd:class:CODE:reveals      hash: lesson step -> the live answer revealed for it
    sd:class:CODE:seats        hash: seat -> its number in the class (1, 2, ...), for the results
    sd:class:CODE:challenges   hash: challenge number -> the challenge asked (gallery.Challenge)
    sd:class:CODE:runs:N       hash: seat -> its latest run for challenge N (gallery.Submission)
    sd:class:CODE:shown        the run the teacher shows the class, without its seat
    sd:class:CODE:seen         sorted set: seat -> time of its last poll
    sd:class:CODE:following    sorted set: seat -> time of its last poll while following
    sd:tries:WHO               count of wrong class codes (stockdemo/classroom/codes.py)
    sd:replicas                hash: server process -> {"n": class tabs it holds, "at": when said}
                               (stockdemo/classroom/replicas.py; for all classes)
    sd:replicas:held           hash: server process -> "1" while make serve holds it out of
                               its balancer (deploy/serve.py); the roll leaves it out
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from stockdemo.classroom.errors import UNAVAILABLE, ClassUnavailable
from stockdemo.config import STEP

MAX_CHALLENGES = 30  # challenges one class may ask: each one's runs are a key of their own


def class_key(code: str) -> str:
    """The class's own hash; every other key of the class starts with it."""
    return f"sd:class:{code}"


def class_keys(code: str) -> list[str]:
    """Every key a class may own: its lesson, answers for each lesson step, reveals, seats,
    presence, challenges and their runs, the run shown."""
    main = class_key(code)
    return [main, f"{main}:seen", f"{main}:following", f"{main}:reveals", f"{main}:seats",
            f"{main}:lesson",
            *(f"{main}:answers:{n}" for n in range(STEP.low, STEP.high + 1)),
            f"{main}:challenges", f"{main}:shown",
            *(f"{main}:runs:{n}" for n in range(1, MAX_CHALLENGES + 1))]


@contextmanager
def reachable() -> Iterator[None]:
    """Run store commands; a store that does not answer becomes ``ClassUnavailable``."""
    try:
        yield
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise ClassUnavailable(UNAVAILABLE) from exc


def connect(redis_url: str | None) -> Store:
    """``redis://host:port/db`` -> a client of that Redis; None or "" -> a MemoryStore.

    Nothing is connected here: each command takes a pooled connection and a
    dead one is dropped, so when Redis comes back the next command reconnects.
    One retry covers a connection that died while Redis restarted; short
    timeouts keep a page from hanging while Redis is down.
    """
    if not redis_url:
        return MemoryStore()
    return redis.Redis.from_url(redis_url, decode_responses=True, socket_timeout=0.5,
                                socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 1))


class MemoryStore:
    """A dict with expiry times that answers like a redis-server."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock  # seconds, for expiry; tests pass one they move
        self._data: dict[str, object] = {}
        self._expires: dict[str, float] = {}
        self._lock = threading.RLock()
        self._writes = 0

    def _live(self, name: str, make: Callable[[], object] | None = None):
        with self._lock:
            if name in self._expires and self._expires[name] <= self.clock():
                self._data.pop(name, None)
                self._expires.pop(name, None)
            if name not in self._data and make is not None:
                self._data[name] = make()
            return self._data.get(name)

    def pipeline(self, transaction: bool = True) -> _MemoryPipeline:
        return _MemoryPipeline(self)

    def get(self, name: str) -> str | None:
        return self._live(name)

    def incr(self, name: str) -> int:
        with self._lock:
            value = int(self._live(name) or 0) + 1
            self._data[name] = str(value)
            return value

    def hget(self, name: str, key: str) -> str | None:
        return (self._live(name) or {}).get(key)

    def hgetall(self, name: str) -> dict[str, str]:
        with self._lock:
            return dict(self._live(name) or {})

    def hdel(self, name: str, *keys: str) -> int:
        with self._lock:
            table = self._live(name) or {}
            return sum(table.pop(key, None) is not None for key in keys)

    def hexists(self, name: str, key: str) -> bool:
        return key in (self._live(name) or {})

    def hvals(self, name: str) -> list[str]:
        with self._lock:
            return list((self._live(name) or {}).values())

    def hlen(self, name: str) -> int:
        return len(self._live(name) or {})

    def hset(self, name: str, key: str | None = None, value: object = None,
             mapping: Mapping[str, object] | None = None) -> int:
        with self._lock:
            table = self._live(name, dict)
            items = dict(mapping or {})
            if key is not None:
                items[key] = value
            added = len(set(items) - set(table))
            table.update({k: str(v) for k, v in items.items()})
            return added

    def hsetnx(self, name: str, key: str, value: object) -> bool:
        with self._lock:
            table = self._live(name, dict)
            if key in table:
                return False
            table[key] = str(value)
            return True

    def hincrby(self, name: str, key: str, amount: int = 1) -> int:
        with self._lock:
            table = self._live(name, dict)
            table[key] = str(int(table.get(key, 0)) + amount)
            return int(table[key])

    def zadd(self, name: str, mapping: Mapping[str, float]) -> int:
        with self._lock:
            scores = self._live(name, dict)
            added = len(set(mapping) - set(scores))
            scores.update(mapping)
            return added

    def zrem(self, name: str, *values: str) -> int:
        with self._lock:
            scores = self._live(name) or {}
            return sum(scores.pop(v, None) is not None for v in values)

    def zremrangebyscore(self, name: str, low: float, high: float) -> int:
        with self._lock:
            scores = self._live(name) or {}
            gone = [m for m, s in scores.items() if low <= s <= high]
            for member in gone:
                del scores[member]
            return len(gone)

    def zrangebyscore(self, name: str, low: float | str, high: float | str) -> list[str]:
        """Members scored from ``low`` to ``high`` ("-inf", "+inf" allowed), lowest first."""
        low, high = float(low), float(high)
        with self._lock:
            scores = self._live(name) or {}
            return [m for m, s in sorted(scores.items(), key=lambda i: i[1]) if low <= s <= high]

    def zcard(self, name: str) -> int:
        return len(self._live(name) or {})

    def expire(self, name: str, seconds: int, nx: bool = False) -> bool:
        with self._lock:
            self._sweep()
            if self._live(name) is None or (nx and name in self._expires):
                return False
            self._expires[name] = self.clock() + seconds
            return True

    def _sweep(self) -> None:
        """Now and then drop every expired key: keys nobody reads again (a wrong code's
        counter, an abandoned class) would otherwise stay in memory for good."""
        self._writes += 1
        if self._writes % 1000:
            return
        now = self.clock()
        for name in [n for n, at in self._expires.items() if at <= now]:
            self._data.pop(name, None)
            del self._expires[name]

    def ttl(self, name: str) -> int:
        with self._lock:
            if self._live(name) is None:
                return -2
            if name not in self._expires:
                return -1
            return math.ceil(self._expires[name] - self.clock())

    def delete(self, *names: str) -> int:
        with self._lock:
            gone = sum(self._live(n) is not None for n in names)
            for name in names:
                self._data.pop(name, None)
                self._expires.pop(name, None)
            return gone

    def keys(self, pattern: str = "*") -> list[str]:
        """Live key names matching a prefix pattern ("sd:class:CODE*"), as Redis's KEYS."""
        prefix = pattern.rstrip("*")
        with self._lock:
            return [name for name in list(self._data) if name.startswith(prefix)
                    and self._live(name) is not None]


class _MemoryPipeline:
    """Commands queued, then run together under the store's lock (a MULTI/EXEC)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._queued: list[tuple[Callable, tuple, dict]] = []

    def __getattr__(self, name: str) -> Callable[..., _MemoryPipeline]:
        command = getattr(self._store, name)

        def queue(*args, **kwargs) -> _MemoryPipeline:
            self._queued.append((command, args, kwargs))
            return self

        return queue

    def execute(self) -> list:
        with self._store._lock:
            try:
                return [command(*args, **kwargs) for command, args, kwargs in self._queued]
            finally:
                self._queued.clear()


Store = MemoryStore | redis.Redis  # what a Classroom runs over
