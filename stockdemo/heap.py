"""The garbage collector of a long-running process: a server replica or a training worker.

CPython's cyclic collector runs when enough container objects were allocated
since the last pass (700 by default), and every tenth pass also scans the
older generation, every hundredth the whole heap. With torch, plotly and
Streamlit loaded the heap holds some 300,000 objects that live as long as the
process, so each full pass rescans them for nothing. A Streamlit rerun
allocates thousands of small objects (protobufs, dicts of the graph), so under
a class's burst of slider moves the collector ran often, holding the GIL every
session's rerun needs. ``tune_for_serving`` freezes what the imports built and
collects young objects less often; cycles are still collected, only less often,
and memory stays flat (docs/decisions.md has the figures).
"""

from __future__ import annotations

import ctypes
import gc
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

# Young objects allocated before a pass: 20,000, not 700. A pass then still scans
# only the young objects, and runs 30x less often.
YOUNG_THRESHOLD = 20_000


def tune_for_serving() -> None:
    """Freeze what the imports built and collect less often. Call once per process, after the imports.

    ``gc.freeze`` moves every object alive now (modules, classes, torch's and
    Streamlit's tables) to a permanent generation that later passes skip.
    Safe to call twice: the second call freezes little and sets the same thresholds.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block: for code that makes many small acyclic objects (a
    record, a graph, a layout, a replay's hooks), where a pass triggered midway would scan the
    whole heap, torch's included, for nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
# Blocks this large or larger get their own mapping, handed back to the system when freed.
# Fixed, it also stops glibc raising it (up to 32 MB) each time such a block is freed: the
# next payloads of megabytes then came from the arenas and stayed there, free but kept.
MMAP_THRESHOLD = 128 * 1024
# Free memory at the top of an arena beyond this goes back to the system.
TRIM_THRESHOLD = 128 * 1024


def tune_malloc() -> bool:
    """Make glibc's malloc hand large freed blocks back to the system: call once, at start.

    Set in the process, not by ``MALLOC_*`` variables, so it holds wherever ``streamlit run``
    starts it (Community Cloud runs the app itself). -> False where the C library has no
    ``mallopt`` (macOS); musl and jemalloc ignore it.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


# Shared by everything that holds them, never part of one cached value: not counted.
_NOT_COUNTED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.CodeType, type(None), bool)


def size_of(value: object, apart: tuple[type, ...] = ()) -> int:
    """Bytes held by ``value`` and everything it reaches (each object once): a cache's cost.
    ``apart``: types whose objects another cached value counts (not walked into).

    Walks the objects the collector sees (containers, instances) and adds each one's
    ``sys.getsizeof``; a tensor counts its storage, an array its buffer. Classes,
    modules and functions are shared with the rest of the process: not counted.
    """
    seen: set[int] = set()
    todo = [value]
    total = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _NOT_COUNTED) or isinstance(obj, apart):
            continue
        seen.add(id(obj))
        storage = getattr(obj, "untyped_storage", None)
        if storage is not None and type(obj).__module__.startswith("torch"):
            try:
                total += storage().nbytes()
            except (RuntimeError, TypeError):
                pass
        try:
            total += sys.getsizeof(obj)
        except TypeError:
            continue
        todo.extend(gc.get_referents(obj))
    return total
