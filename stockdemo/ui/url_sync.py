"""The address bar and the knobs: a value written unless it is the default, a link's values
checked once, and a page's link giving way to settings from elsewhere.

Values from a link are untrusted: each goes through its knob's ``parse``
(``stockdemo.config``), which clamps or falls back and never raises.
"""

from __future__ import annotations

import streamlit as st

from stockdemo.config import (
    COMPARE,
    LAB_GRAPH,
    NODE,
    PAGE_KNOBS,
    PANEL,
    ChoiceKnob,
    IntKnob,
    TextKnob,
    url_value,
)
from stockdemo.graph import Graph
from stockdemo.i18n import tr
from stockdemo.layout.picture import Picture
from stockdemo.live import inspection
from stockdemo.ui import compat, keys

Knob = IntKnob | ChoiceKnob | TextKnob


def to_url(knob: Knob, value: object) -> str | None:
    """Write ``value`` to the URL under the knob's name, as a link carries it; at the knob's
    default, take the knob out of the URL. -> what the URL holds for it now (None: nothing).

    Written only when it differs: each write sends the browser a new address.
    """
    shown = None if value == knob.default else url_value(knob.name, value)
    if st.query_params.get(knob.name) != shown:
        if shown is None:
            st.query_params.pop(knob.name, None)
        else:
            st.query_params[knob.name] = shown
    return shown


def number_box(knob: Knob) -> bool:
    """Wide integer ranges get a number box; the rest a slider or a select box."""
    return isinstance(knob, IntKnob) and knob.high - knob.low > 300


def widget_value(knob: Knob, value: object) -> object:
    """A knob's value as its widget holds it in session_state (a number box holds a float)."""
    return float(value) if number_box(knob) else value


def url_messages(page: str) -> None:
    """Validate the URL's values for ``page`` (its file) once per session, before its widgets read them.

    Streamlit silently drops a bound query value it cannot use; we clamp it
    instead (``?seq_len=999`` becomes 200) and say so on the page.
    """
    # The open tab, the node, the Lab's graph and the pinned run A are read by their own
    # code: Streamlit's tabs and segmented control by title, the node against the run's
    # graph (node_from_url), run A by the stage (ui.compare.compare_config).
    knobs = [k for k in PAGE_KNOBS[page] if k not in (PANEL, NODE, LAB_GRAPH, COMPARE)]
    done_key = keys.link_checked(page)
    if done_key in st.session_state:
        messages = st.session_state[done_key]
    else:
        raw = {k.name: st.query_params.get_all(k.name) for k in knobs
               if k.name in st.query_params}
        messages = []
        for knob in knobs:
            if knob.name in raw:
                value, message = knob.parse(raw[knob.name])
                st.session_state[knob.name] = widget_value(knob, value)
                _address_says(knob, value, raw[knob.name][-1])
                if message:
                    messages.append(message)
                if len(raw[knob.name]) > 1:
                    messages.append(tr("{knob}: the link repeats this setting; the last value was used.",
                                       knob=tr(knob.label)))
        st.session_state[done_key] = messages
    for message in messages:
        st.warning(message, icon=":material/link_off:")


def _address_says(knob: Knob, value: object, raw: str) -> None:
    """The address holds ``value`` as the widget shows it. A bound widget drops a link's text it
    cannot read as one of its own (a menu's label in another language, ``cell=gru``, a number
    out of range) while the page takes the value: the address would no longer reproduce it."""
    if isinstance(knob, TextKnob):
        return
    shown = knob.show(value) if isinstance(knob, ChoiceKnob) else url_value(knob.name, value)
    if raw != shown:
        compat.link_carries(knob.name, shown)


def link_superseded(page: str) -> None:
    """The settings of ``page`` were set from elsewhere (a teacher followed): its own link is
    not taken, nor checked, for the rest of the session (``url_messages``)."""
    st.session_state[keys.link_checked(page)] = []


def node_from_url(graph: Graph, default: str) -> None:
    """The Debugging page's node picker state, before the picker is drawn.

    A node named in the link, by id (``?node=L0.t2/Tanh0``) or by the label
    Streamlit itself writes there, is used once per session; any other value
    gets a message and the default node. A node that a new run no longer has
    (T made shorter) falls back to the default too.
    """
    done_key = keys.NODE_CHECKED
    if done_key not in st.session_state:
        message = None
        raw, message = NODE.parse(st.query_params.get_all(NODE.name) or None)
        if raw:
            node_id, message = inspection.resolve_node(graph, raw)
            if node_id is not None:
                st.session_state[NODE.name] = node_id
        st.session_state[done_key] = message
    if st.session_state[done_key]:
        st.warning(st.session_state[done_key], icon=":material/link_off:")
    if st.session_state.get(NODE.name) not in graph.by_id:
        st.session_state[NODE.name] = default


def selected_from_url(picture: Picture, raw: list[str]) -> tuple[str | None, str | None]:
    """The URL's ``node`` values -> (graph node id, None) or (None, message). Never raises."""
    if not raw:
        return None, None
    value = str(raw[-1]).strip()
    if value in picture.drawn_as:
        return value, None
    shown = value if len(value) <= 60 else value[:57] + "..."
    return None, tr("The link names node `{node}`, which this run's graph does not have (node ids look like "
                    "`L0.t4/Tanh0`), so no node is selected.", node=shown)
