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

import gc
import sys
import types

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


# Shared by everything that holds them, never part of one cached value: not counted.
_NOT_COUNTED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.CodeType, type(None), bool)


def size_of(value: object) -> int:
    """Bytes held by ``value`` and everything it reaches (each object once): a cache's cost.

    Walks the objects the collector sees (containers, instances) and adds each one's
    ``sys.getsizeof``; a tensor counts its storage, an array its buffer. Classes,
    modules and functions are shared with the rest of the process: not counted.
    """
    seen: set[int] = set()
    todo = [value]
    total = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _NOT_COUNTED):
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
