"""Large values shared by every caller, bounded in bytes as well as in entries (least recently used first).

One graph of 10,000 nodes costs as much as a thousand small ones, so a count of entries
bounds nothing. A ``ByteLRU`` keeps two kinds of value in one budget of bytes, shared by
every function it caches, so the budget goes to whatever was used last:

- ``cache(max_entries)``: a function's value on its (hashable) arguments, made once however
  many threads ask at the same moment, an exception not kept;
- ``per_object(obj, make, size)``: a value that depends on one object alone, kept while
  the object lives (by identity, with a weak reference), within a share of the budget.

``host.cache_budget()`` (a share of the host's memory; the operator's ``STOCKDEMO_CACHE_MB``)
is what caching may cost the server; the values themselves take at most ``VALUES_SHARE``
of it (``held_budget``), plus the one value just made. No Streamlit: ``stockdemo/ui/caches.py``
holds the app's one ``ByteLRU`` and a wrapper per cached thing.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import TypeVar

from stockdemo import heap, host

T = TypeVar("T")

# What holding large values costs the server beyond their own bytes, measured inside it after
# forty learners' programs of 8,684 nodes (docs/hosting.md, "Forty large programs from links"):
# for 28 MB of live values, 16 MB free inside Python's pools that those values and their making
# left part-used, and 8 MB more in glibc's arenas. So the values get half of the budget and
# the heap around them the other half, and the server grows by no more than the budget.
VALUES_SHARE = 0.5


def held_budget() -> int:
    """Bytes the values of a ``ByteLRU`` and its values per object may take together."""
    return int(host.cache_budget() * VALUES_SHARE)


class ByteLRU:
    """Values bounded in bytes (``budget()``, read at each making) and per function in entries.

    ``per_object_entries``, ``per_object_share``: the values kept per object, at most this
    many, within this share of the budget (fixed when made), which ``cache``'s values give up.
    """

    def __init__(self, budget: Callable[[], int] = held_budget, per_object_entries: int = 256,
                 per_object_share: float = 0.25) -> None:
        self.budget = budget
        # (function, arguments) -> (value, its bytes), least recently used first.
        self._held: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._count: Counter[str] = Counter()
        self._making: dict[tuple, threading.Lock] = {}  # one thread makes a value; the others wait for it
        # function -> its last value's bytes: the room made before its next.
        self._last_size: dict[str, int] = {}
        self.held_bytes = 0
        # id(object) -> (a weak reference to it, its value, the value's bytes), least recently used first.
        self._objects: OrderedDict[int, tuple[weakref.ref, object, int]] = OrderedDict()
        self._objects_lock = threading.Lock()
        self._objects_keep = per_object_entries
        self._objects_max = int(budget() * per_object_share)
        self.object_bytes = 0

    def cache(self, max_entries: int, size: Callable[[object], int] = heap.size_of) -> Callable:
        """Cache a function's value on its (hashable) arguments, bounded in bytes (``size``'s).

        Like ``st.cache_resource``: one value per arguments, shared (read it, never modify it),
        made once however many threads ask at the same moment, an exception not cached.
        Keyword arguments are not part of the key (who asks, how to tell them they wait): they
        go to the call that makes the value.
        """
        def wrap(fn: Callable) -> Callable:
            name = fn.__qualname__

            @functools.wraps(fn)
            def cached(*args, **unkeyed):
                key = (name, *args)
                with self._lock:
                    hit = self._hit(key)
                    if hit is not None:
                        return hit[0]
                    making = self._making.setdefault(key, threading.Lock())
                with making:
                    with self._lock:
                        hit = self._hit(key)
                    if hit is not None:
                        return hit[0]
                    self._make_room(name)
                    try:
                        value = fn(*args, **unkeyed)
                        self._keep(key, value, size(value), max_entries)
                    finally:
                        with self._lock:
                            self._making.pop(key, None)
                return value

            return cached

        return wrap

    def _hit(self, key: tuple) -> tuple[object, int] | None:
        hit = self._held.get(key)
        if hit is not None:
            self._held.move_to_end(key)
        return hit

    def _make_room(self, name: str) -> None:
        """Drop the least recently used values until ``name``'s next value fits, if as large as its
        last: they are freed before it is made, so the heap does not hold both for a moment."""
        room = self.budget() - self.object_bytes - self._last_size.get(name, 0)
        with self._lock:
            while self.held_bytes > room and self._held:
                old, (_, size) = self._held.popitem(last=False)
                self.held_bytes -= size
                self._count[old[0]] -= 1

    def _keep(self, key: tuple, value: object, size: int, max_entries: int) -> None:
        """Keep ``value``; drop the least recently used values until the budget holds (never ``value``)."""
        budget = self.budget() - self.object_bytes  # the values per object are spent first
        with self._lock:
            self._last_size[key[0]] = size
            if key in self._held:
                return
            self._held[key] = (value, size)
            self.held_bytes += size
            self._count[key[0]] += 1
            for old in list(self._held):  # least recently used first
                over_budget, over_count = self.held_bytes > budget, self._count[key[0]] > max_entries
                if not (over_budget or over_count):
                    break
                if old == key or (not over_budget and old[0] != key[0]):
                    continue  # too many of one function's values: its own oldest goes
                self.held_bytes -= self._held.pop(old)[1]
                self._count[old[0]] -= 1

    def per_object(self, obj: object, make: Callable[[object], T], size: Callable[[T], int]) -> T:
        """``make(obj)``, kept while ``obj`` lives: an entry whose object is gone (it can never
        match again) goes at the next value made."""
        with self._objects_lock:
            hit = self._objects.get(id(obj))
            if hit is not None and hit[0]() is obj:
                self._objects.move_to_end(id(obj))
                return hit[1]
        built = make(obj)
        nbytes = size(built)
        with self._objects_lock:
            for gone in [key for key, (ref, _, _) in self._objects.items() if ref() is None]:
                self.object_bytes -= self._objects.pop(gone)[2]
            old = self._objects.pop(id(obj), None)
            if old is not None:
                self.object_bytes -= old[2]
            self._objects[id(obj)] = (weakref.ref(obj), built, nbytes)
            self.object_bytes += nbytes
            while len(self._objects) > self._objects_keep or (
                    self.object_bytes > self._objects_max and len(self._objects) > 1):
                self.object_bytes -= self._objects.popitem(last=False)[1][2]
        return built

    def clear(self) -> None:
        """Forget every value (tests that need cold caches)."""
        with self._lock:
            self._held.clear()
            self._count.clear()
            self._last_size.clear()
            self.held_bytes = 0
        with self._objects_lock:
            self._objects.clear()
            self.object_bytes = 0

    def status(self) -> dict[str, int]:
        """For an operator: values held, their bytes, the budget (what caching may cost the
        server) and the part of it the values may take."""
        with self._lock:
            return {"values": len(self._held), "bytes": self.held_bytes, "budget": host.cache_budget(),
                    "for_values": self.budget()}
