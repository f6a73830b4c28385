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
