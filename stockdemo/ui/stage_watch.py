"""The panels under a stage follow it once the learner stops; and the stage is watched.

The panels under a stage (the Playground's predictions, ops, code...) follow the run
only once the learner stops moving: drawing them for every value a drag crosses would
redraw a plotly chart each time. The stage's browser code fires a DOM event
("stockdemo:settled") when the learner stops; this listener, drawn inside the panels'
fragment, turns it into a trigger of its own, so only that fragment reruns: not the
stage again, not the page frame.

It also watches the stage. The panels are drawn after the stage, in the same run; if
WATCH_MS later no graph view is drawn as a stage (the graph view's own register,
window.stockdemoStages) and its code is not still loading, the listener says "missing"
and the page runs again whole: a stage's element sent on the websocket and never drawn
was seen on slow boxes (docs/decisions.md).
"""

from __future__ import annotations

import logging
import time

import streamlit as st

from stockdemo.ui import hooks, keys
from stockdemo.ui.assets import component_js
from stockdemo.ui.stage_route import catch_up

_LOGGER = logging.getLogger(__name__)
WATCH_MS = 3000
_SETTLE_LISTENER = st.components.v2.component("stockdemo_settle", html="<span hidden></span>",
                                               js=component_js("settle", watch_ms=WATCH_MS))
# A stage found missing runs the page again at most this many times in REDRAW_WINDOW_S: a
# graph view that cannot draw at all (its code broken) must not rerun the page for ever.
REDRAWS = 3
REDRAW_WINDOW_S = 60.0


def settle_listener(key: str = "stage_settled") -> str | None:
    """Draw first inside the fragment that must follow the stage once the learner stops moving.

    -> the picture the browser's stage settled on (its payload's ``graph``), when that is
    what reran this fragment; else None. If the browser found the stage missing, the
    whole page runs again instead (REDRAWS at most in REDRAW_WINDOW_S). The session
    takes the moves served without a run first (``stage_route.catch_up``).
    """
    catch_up()
    got = _SETTLE_LISTENER(key=key, height=0,
                           on_settled_change=lambda: None, on_missing_change=lambda: None)
    if getattr(got, "missing", None):
        now, redrawn = time.monotonic(), st.session_state.get(keys.STAGE_REDRAWN, [])
        if sum(now - at < REDRAW_WINDOW_S for at in redrawn) < REDRAWS:
            st.session_state[keys.STAGE_REDRAWN] = [*redrawn, now]
            _LOGGER.warning("stage: the browser has no stage %.0f ms after its panels; "
                            "the page runs again whole", WATCH_MS)
            st.rerun(scope="app")
    settled = getattr(got, "settled", None)
    graph = settled.get("graph") if isinstance(settled, dict) else None
    return graph if isinstance(graph, str) and len(graph) <= 64 else None


def stage_settled(graph: str | None) -> None:
    """Last in the panels under a stage: the browser's stage settled on ``graph`` (or None).

    Listeners may ask for the stage again (a following student's tab whose stage holds
    another picture than the one last sent), so nothing may come after this call.
    """
    hooks.fire(hooks.STAGE_SETTLED, graph)
