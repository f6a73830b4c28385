"""The few Redis commands class mode uses, kept in this process's memory (``make run``).

``stockdemo.classroom.Classroom`` runs over this or over ``redis.Redis``
(``make serve``): the same calls, the same answers. Values are kept as
strings, as Redis returns them with ``decode_responses``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping


class MemoryStore:
    """A dict with expiry times that answers like a redis-server."""

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self._expires: dict[str, float] = {}
        self._lock = threading.RLock()
        self._writes = 0

    def _live(self, name: str, make: Callable[[], object] | None = None):
        with self._lock:
            if name in self._expires and self._expires[name] <= time.monotonic():
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

    def zcard(self, name: str) -> int:
        return len(self._live(name) or {})

    def expire(self, name: str, seconds: int, nx: bool = False) -> bool:
        with self._lock:
            self._sweep()
            if self._live(name) is None or (nx and name in self._expires):
                return False
            self._expires[name] = time.monotonic() + seconds
            return True

    def _sweep(self) -> None:
        """Now and then drop every expired key: keys nobody reads again (a wrong code's
        counter, an abandoned class) would otherwise stay in memory for good."""
        self._writes += 1
        if self._writes % 1000:
            return
        now = time.monotonic()
        for name in [n for n, at in self._expires.items() if at <= now]:
            self._data.pop(name, None)
            del self._expires[name]

    def ttl(self, name: str) -> int:
        with self._lock:
            if self._live(name) is None:
                return -2
            if name not in self._expires:
                return -1
            return math.ceil(self._expires[name] - time.monotonic())

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
