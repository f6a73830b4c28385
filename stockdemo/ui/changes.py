"""What changed since this session's previous run: a sentence, the change in nodes, the new nodes."""

from __future__ import annotations

import streamlit as st

from stockdemo.config import RunConfig
from stockdemo.diff import describe_diff, graph_diff
from stockdemo.graph import Graph
from stockdemo.ui import keys


def change_since_previous(config: RunConfig, graph: Graph) -> tuple[str, int | None, tuple[str, ...]]:
    """What changed since this session's previous run with other settings (kept per user).

    A rerun with the same settings (a click on a node, the view or a panel
    changed) is not a new run: it keeps reporting the last change.
    -> (a sentence, the change in node count; None on the session's first run,
    the ids of the nodes added since the previous run, for the graph view to mark)
    """
    previous = st.session_state.get(keys.PREVIOUS_RUN)
    if previous is not None and previous["config"] == config:
        return previous["change"], previous["delta"], previous["new"]
    if previous is None:
        change, delta, new = "First run of this session: every node is new.", None, ()
    else:
        diff = graph_diff(previous["graph"], graph)
        change = describe_diff(diff, previous["config"].__dict__, config.__dict__)
        delta = graph.counts.nodes - previous["graph"].counts.nodes
        new = tuple(n.id for n in diff.added_nodes)
    st.session_state[keys.PREVIOUS_RUN] = {"config": config, "graph": graph, "change": change,
                                           "delta": delta, "new": new}
    return change, delta, new
