"""One widget per knob, bound to the URL; rows of them; the pickers that open one of several things.

Every knob widget announces itself (``hooks.KNOB_DRAWN``) and a move by hand
(``hooks.KNOB_MOVED``), so a plug-in can act on them (class mode: a teacher's value
goes to the class, a following student's move snaps back) without this module knowing.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from stockdemo.config import LAB_GRAPH, LAB_TAB, PANEL, PANEL_LABELS, ChoiceKnob, IntKnob
from stockdemo.i18n import in_every_language, tr
from stockdemo.ui import hooks, keys
from stockdemo.ui.url_sync import number_box, to_url


def knob_widget(knob: IntKnob | ChoiceKnob, bound: bool = True):
    """One control for one knob, bound to the URL under the knob's name.

    ``bound=False``: the page keeps the URL itself (``seldom_row``); the value
    outlives the widget while the learner stays on the page.
    """
    url = {"bind": "query-params"} if bound else {"persist_state": "page"}
    url.update(on_change=hooks.fire, args=(hooks.KNOB_MOVED, knob.name))
    if isinstance(knob, ChoiceKnob):
        value = st.selectbox(tr(knob.label), knob.choices, index=knob.choices.index(knob.default),
                             key=knob.name, help=tr(knob.help), format_func=knob.show, **url)
    elif not number_box(knob):
        value = st.slider(tr(knob.label), knob.low, knob.high, value=knob.default, step=knob.step,
                          key=knob.name, help=tr(knob.help), **url)
    else:
        # A float box shown as an integer: an int box raises on ?seed=inf, a float box drops
        # it; integers up to 2**53 are exact as floats. "%.0f": "%d" on a float box warns.
        value = int(st.number_input(tr(knob.label), float(knob.low), float(knob.high),
                                    value=float(knob.default), step=float(knob.step), format="%.0f",
                                    key=knob.name, help=tr(knob.help), **url))
    hooks.fire(hooks.KNOB_DRAWN, knob, value)
    return value


def knob_row(*knobs: IntKnob | ChoiceKnob, bound: bool = True) -> dict[str, object]:
    """A row of controls, bound to the URL unless ``bound=False`` -> {knob name: value}.

    A row container, not st.columns: one block instead of one per column, and
    every block is a message the server sends again on each rerun.
    """
    with st.container(horizontal=True, gap="medium"):
        return {knob.name: knob_widget(knob, bound) for knob in knobs}


def seldom_row(label: str, key: str, *knobs: IntKnob | ChoiceKnob) -> dict[str, object]:
    """Settings a learner seldom changes, in an expander that draws them only while open.

    -> {knob name: value}, open or closed. Every widget costs server time on every
    rerun, so closed, a value comes from the session: the link's (``url_messages``)
    or the widget's last (kept by ``persist_state``). Streamlit drops a bound
    widget's URL value when the widget stops being drawn, so these widgets
    are not bound: the URL is written here, open or closed.
    """
    with st.expander(label, key=key, on_change="rerun") as more:
        if more.open:
            values = knob_row(*knobs, bound=False)
        else:
            values = {knob.name: held(knob) for knob in knobs}
    for knob in knobs:
        to_url(knob, values[knob.name])
    return values


def held(knob: IntKnob | ChoiceKnob) -> object:
    """A knob's value while its widget is not drawn: the session's, else the default."""
    value = st.session_state.get(knob.name, knob.default)
    return int(value) if number_box(knob) else value


def controls_locked() -> str | None:
    """Why this tab's controls cannot be moved now, as a hint to show (a listener's); else None."""
    return hooks.ask(hooks.CONTROLS_LOCKED)


def capped_knob_widget(knob: IntKnob, high: int) -> int:
    """A knob's URL-bound slider whose top is set by the run (e.g. a step below T).

    A value left over from a longer run, or from the URL, is clamped first:
    a slider may not hold a value beyond its range.
    """
    high = max(knob.low, min(knob.high, high))
    if st.session_state.get(knob.name, knob.default) > high:
        st.session_state[knob.name] = high
    if high == knob.low:
        st.caption(tr("{knob}: {value} (the only step of this run)", knob=tr(knob.label), value=knob.low))
        return knob.low
    value = st.slider(tr(knob.label), knob.low, high, value=min(knob.default, high), step=knob.step,
                      key=knob.name, help=tr(knob.help), bind="query-params",
                      on_change=hooks.fire, args=(hooks.KNOB_MOVED, knob.name))
    hooks.fire(hooks.KNOB_DRAWN, knob, value)
    return value


def experiment_tabs(names: Sequence[str]) -> list[tuple[object, str]]:
    """The Lab's experiments as lazy tabs, titled in the reader's language -> (tab, name) pairs.

    The open one is kept by its English name (``LAB_TAB``), which the session, the link's
    ``?lab=`` and the class carry, so a link opens it in any language: a link followed
    names it (a title in any language is read), else the session's last, else the first.
    """
    in_link = st.query_params.get(LAB_TAB.name)
    if LAB_TAB.name not in st.session_state or in_link not in (None, st.session_state.get(keys.LAB_WRITTEN)):
        name, message = LAB_TAB.parse(st.query_params.get_all(LAB_TAB.name) or None)
        st.session_state[LAB_TAB.name] = name
        if message:
            st.warning(message, icon=":material/link_off:")
    name = st.session_state[LAB_TAB.name]
    st.session_state[keys.LAB_WRITTEN] = to_url(LAB_TAB, name)
    st.session_state[keys.LAB_TABS] = tr(name)
    tabs = st.tabs([tr(n) for n in names], key=keys.LAB_TABS, on_change=_tab_picked)
    return list(zip(tabs, names, strict=True))


def _tab_picked() -> None:
    """A tab clicked: its experiment by its English name (the callback runs before the page
    decides the language, so the title is read in any language)."""
    st.session_state[LAB_TAB.name] = LAB_TAB.parse(st.session_state[keys.LAB_TABS])[0]


def graph_picker(labels: list[str]) -> int:
    """The Lab's "Show the graph" picker over an experiment's graphs (English msgids, said in the
    reader's language) -> the index picked.

    Bound to the link as ``lab_graph``, by the name it shows; drawn when there is a choice.
    A name in another language is read; a name the open experiment does not have (a
    tampered link, or one left from another experiment's tab) picks its first graph and is
    dropped from the link. (An experiment with one graph leaves the link alone: Streamlit
    refuses to delete a parameter a widget was bound to, even in an earlier run.)
    """
    if len(labels) < 2:
        return 0
    held = st.session_state.get(LAB_GRAPH.name)
    if held not in (None, *labels):
        # Streamlit would reset the widget itself but keep the old name in the link.
        st.session_state[LAB_GRAPH.name] = next(
            (label for label in labels if held in in_every_language(label)), labels[0])
    picked = st.segmented_control(tr(LAB_GRAPH.label), labels, format_func=tr, default=labels[0],
                                  required=True, key=LAB_GRAPH.name, bind="query-params",
                                  help=tr(LAB_GRAPH.help))
    return labels.index(picked) if picked in labels else 0


def panel_picker() -> str:
    """The Playground's panels under the stage -> the key of the one open (``PANEL_LABELS``).

    Bound to the link as ``panel``, by label, like the Lab's graph picker. A segmented
    control, not ``st.tabs``: the browser redraws every element at each run of any part
    of the page, and tabs were the dearest there, slowing each step of the stage.
    """
    labels = list(PANEL_LABELS.values())  # msgids: the link carries a label in any language
    in_link = st.query_params.get(PANEL.name)
    named = next((label for label in labels if in_link in in_every_language(label)), None)
    if named is not None and named != st.session_state.get(keys.PANEL_SHOWN, named):
        st.session_state[PANEL.name] = named  # a link followed later in the session names one
    if st.session_state.get(PANEL.name) not in (None, *labels):
        st.session_state[PANEL.name] = labels[0]  # a tampered link: the first panel
    picked = st.segmented_control(tr(PANEL.label), labels, format_func=tr, default=labels[0], required=True,
                                  key=PANEL.name, bind="query-params", label_visibility="collapsed")
    st.session_state[keys.PANEL_SHOWN] = picked
    return next((key for key, label in PANEL_LABELS.items() if label == picked), PANEL.default)
