"""What changed since this session's previous run: a sentence, the change in nodes, the new nodes."""

from __future__ import annotations

import streamlit as st

from stockdemo.config import RunConfig
from stockdemo.graph import Graph
from stockdemo.ui import keys
from stockdemo.ui.caches import change_since


def change_since_previous(config: RunConfig, graph: Graph) -> tuple[str, int | None, tuple[str, ...]]:
    """What changed since this session's previous run with other settings (kept per user).

    A rerun with the same settings (a click on a node, the view or a panel
    changed) is not a new run: it keeps reporting the last change. The diff itself is
    shared by every session moving between the same two settings (``caches.cached_change``).
    -> (a sentence, the change in node count; None on the session's first run,
    the ids of the nodes added since the previous run, for the graph view to mark)
    """
    record = change_since(st.session_state.get(keys.PREVIOUS_RUN), config, graph)
    st.session_state[keys.PREVIOUS_RUN] = record
    return record["change"], record["delta"], record["new"]
