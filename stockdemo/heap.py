"""The garbage collector of a long-running process: a server replica or a training worker.

CPython's cyclic collector runs when enough container objects were allocated
since the last pass (700 by default), and every tenth pass also scans the
older generation, every hundredth the whole heap. With torch, plotly and
Streamlit loaded the heap holds some 300,000 objects that live as long as the
process, so each full pass rescans them for nothing. A Streamlit rerun
allocates thousands of small objects (protobufs, dicts of the graph), so under
a class's burst of slider moves the collector ran often, holding the GIL every
session's rerun needs.

Measured (``bench/load.py burst --target single --pages playground --moves 4``,
30 sessions, 120 moves, ``gc.callbacks`` timing every pass in the server):
783 ms of collection during the burst with the defaults (2 full passes, 449
ms), 95 ms with ``tune_for_serving`` (7 young passes, no full one); the
server's CPU per move fell from 47-50 ms to 41-46 ms.

Cycles are still collected, only less often: ``gc.collect`` still works, and
memory of all processes stayed within the soak's flatness check over 10 minutes
(``bench/load.py soak``: 1,214 MB after warm-up, 1,282 MB at the end).
"""

from __future__ import annotations

import gc

# Young objects allocated before a pass: 20,000, not 700. A pass then still scans
# only the young objects, about 20 ms of work, and runs 30x less often.
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
