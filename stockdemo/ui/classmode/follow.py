"""A following student's page takes the teacher's settings; the teacher's go to the class.

The Playground's stage takes a move the moment it is pushed (``take_settings``, before
its settings are read), draws it, and says so (``drawn``); the class bar asks for the
stage again while what it drew is not the teacher's. On any other page the settings are
put into its controls before they are drawn (``_apply``).
"""

from __future__ import annotations

import time

import streamlit as st

from stockdemo import classroom, lab
from stockdemo.classroom import PLAYGROUND, ClassError, ClassState
from stockdemo.config import LAB_GRAPH, LAB_TAB, NODE, PANEL, RUN_KNOBS, STEP, VIEW, RunConfig
from stockdemo.i18n import N_, tr
from stockdemo.render.payload import graph_key
from stockdemo.ui import compat, keys, steps, url_sync
from stockdemo.ui.caches import cached_picture
from stockdemo.ui.classmode import challenge
from stockdemo.ui.classmode.keys import (
    APPLIED,
    APPLIED_AT,
    ARRIVED_AT,
    CODE,
    DRAWN,
    DRAWN_AT,
    DRAWN_PAGE,
    DRAWN_PAGE_AT,
    HERE,
    SENT_GRAPH,
    STATE,
)
from stockdemo.ui.classmode.push import PAGE_SETTLE_S
from stockdemo.ui.classmode.session import (
    HINT,
    class_room,
    following,
    lab_tab_ok,
    publish,
    seat,
    teacher,
    widget_value,
)
from stockdemo.ui.classmode.watch import given_state, latest_state, watch_class

EDITS_OFF = N_("The teacher's challenge is open: the change is yours to write.")
# A busy server's whole run reaches its browser this late: an address behind sooner may be
# one whose run is still on its way, and running the page again would only add to the queue.
IN_FLIGHT_S = 5.0


def _pushed_state(code: str) -> ClassState | None:
    """The class as the push thread read it a moment ago; None if it has not, or if that read
    is older than a class this tab has already seen or taken (the bar's own poll can be
    newer, and an older move taken here would undo a newer one)."""
    return _not_older(latest_state(code))


def pushed_read(code: str) -> ClassState | None:
    """The read the push thread pushed this run with (watch.given_state), if it is this
    class's and not older than what this tab has seen or taken."""
    state = given_state()
    return _not_older(state) if state is not None and state.code == code else None


def _not_older(state: ClassState | None) -> ClassState | None:
    """``state``, unless it is older than a class this tab has already seen or taken."""
    seen = st.session_state.get(STATE)
    applied = st.session_state.get(APPLIED)
    newest = max(seen[1].version if seen else 0, applied[0] if applied else 0)
    return state if state is not None and state.version >= newest else None


def take(state: ClassState, page: str, full_run: bool) -> bool:
    """Take the teacher's settings on the teacher's page -> whether this page must rerun to show them.

    Asked on every poll, and answered from what the page last drew, not from what
    was last taken: a rerun request that a busy server merged away is asked again.
    ``full_run``: this is a whole-page run, whose widgets come after and take them now.
    While a challenge is open on the Your code page, the editor is the student's own
    (``challenge.take``).
    """
    if challenge.open_here(state, page):
        return challenge.take(state, full_run)
    applied = st.session_state.get(APPLIED)
    if applied is None or applied[0] != state.version or applied[1] != page:
        _apply(page, state.params)
        st.session_state[APPLIED] = applied = (state.version, page, state.params)
        st.session_state[APPLIED_AT] = time.monotonic()
    elif page != PLAYGROUND and _touched(page, state.params):
        _apply(page, state.params)  # a tab or a menu moved by hand: back to the teacher's
        st.toast(tr(HINT), icon=":material/group:")
        st.session_state.pop(DRAWN_PAGE, None)
    elif full_run and page != PLAYGROUND:
        # A whole run draws from the address the browser sent, which can be older than what
        # a run before took (a reconnected tab's own run, after the push's that took the move).
        _apply(page, state.params)
    elif _step_behind(page, state.params):
        # The browser never got the whole run that took it: a run superseded by another
        # loses its last messages. The page runs whole again.
        st.session_state.pop(DRAWN_PAGE, None)
    if page == PLAYGROUND:
        return st.session_state.get(DRAWN) != _control_values(*state.run_settings())
    if full_run:
        st.session_state[DRAWN_PAGE] = (page, applied[2])  # this run draws them
        st.session_state[DRAWN_PAGE_AT] = time.monotonic()
    return st.session_state.get(DRAWN_PAGE) != (page, applied[2])


def _touched(page: str, params: dict[str, str]) -> bool:
    """A control of the page holds another value than the teacher's (moved by hand).

    Only controls the tab holds are compared: a page draws some of its controls only
    at times (the open experiment's, an open expander's), and the rest are not there.
    """
    for knob in classroom.followed_knobs(page):
        if knob is STEP:
            held = steps.kept_step()
        elif knob is LAB_TAB:
            held = st.session_state.get(knob.name)
            wanted = params.get(knob.name) or next(iter(lab.EXPERIMENTS))
            if held is not None and held != wanted:
                return True
            continue
        elif knob in (PANEL, LAB_GRAPH, NODE) or knob.name not in st.session_state:
            continue  # by title, or checked against the run by the page itself; or not drawn
        else:
            held = st.session_state[knob.name]
        if knob.parse(str(held))[0] != knob.parse(params.get(knob.name))[0]:
            return True
    return False


def _step_behind(page: str, params: dict[str, str]) -> bool:
    """The address this run came with holds another Lesson step than the teacher's, though
    the whole run that drew it should have reached the browser by now."""
    sent = st.query_params.get(STEP.name)
    drawn_at = st.session_state.get(DRAWN_PAGE_AT, -IN_FLIGHT_S)
    return (STEP in classroom.followed_knobs(page) and sent is not None
            and time.monotonic() - drawn_at >= IN_FLIGHT_S
            and STEP.parse(sent)[0] != STEP.parse(params.get(STEP.name))[0])


def _apply(page: str, params: dict[str, str]) -> None:
    """Put a page's settings into its controls, before they are drawn."""
    for knob in classroom.followed_knobs(page):
        value, _ = knob.parse(params.get(knob.name))
        if knob is STEP:
            steps.show_step(value)
        elif knob is LAB_TAB:
            if value and lab_tab_ok(value):
                st.session_state[knob.name] = value
            else:
                st.session_state.pop(knob.name, None)  # the first experiment
        elif knob in (LAB_GRAPH, NODE):
            if value:
                st.session_state[knob.name] = value
        else:
            st.session_state[knob.name] = widget_value(knob, value)
    url_sync.link_superseded(page)  # the teacher's settings win over the page's own link


def rerun_live_part(page: str) -> None:
    """Show the teacher's new settings: rerun the Playground's live fragment, else the page.

    Rerunning only the live fragment skips the page frame (menu, presets), which a whole
    class pays for at the same moment on every move.
    """
    if page != PLAYGROUND:
        st.rerun(scope="app")
    if time.monotonic() - st.session_state.get(ARRIVED_AT, -PAGE_SETTLE_S) < PAGE_SETTLE_S:
        # Just arrived on the Playground (the teacher opened it): the browser may not have
        # applied that page change yet, and a run of the stage alone can then go missing in
        # it. The whole page, as the push does (push.Pusher._settled).
        st.rerun(scope="app")
    if not compat.rerun_fragment(keys.PLAYGROUND_LIVE):
        st.rerun(scope="app")


# --------------------------------------------------------------------------- the Playground

def take_settings() -> tuple[RunConfig, str] | None:
    """Before the Playground's controls: a following student's are set to the teacher's
    settings -> those settings; None for anyone else (their controls are their own).

    A browser that has not drawn the teacher's move yet still sends its old values
    with its next message, and those must not undo the move.
    """
    code = st.session_state.get(CODE)
    if not following() or code is None:
        return None
    # The server reruns this part the moment the teacher moves (push.py): take the
    # move here, in the same run, rather than in the class bar and then again here.
    watch_class(code, "live")
    state = _pushed_state(code)  # what the push thread read to push this run, if it did
    if state is None:
        try:
            state = class_room().poll(code, seat(), True)
        except ClassError:
            state = None  # the class bar says so
    if state is not None and state.page == PLAYGROUND:
        take(state, PLAYGROUND, full_run=False)
    applied = st.session_state.get(APPLIED)
    if applied is None or applied[1] != PLAYGROUND:
        return None
    _apply(PLAYGROUND, applied[2])
    config, _ = RunConfig.from_params(applied[2])
    view, _ = VIEW.parse(applied[2].get(VIEW.name))
    return config, view


def _answering_challenge() -> bool:
    """This tab follows a teacher whose challenge is open on the page it is on."""
    seen = st.session_state.get(STATE)
    return following() and challenge.open_here(seen[1] if seen else None, st.session_state.get(HERE))


def following_hint() -> str | None:
    """Why this tab's controls cannot move (``hooks.CONTROLS_LOCKED``): the hint, while it
    follows, except in its editor while the teacher's challenge is open."""
    if not following():
        return None
    return None if _answering_challenge() else tr(HINT)


def edits_off() -> str | None:
    """Why the Your code page offers no ready-made edits (``hooks.CODE_EDITS_OFF``): a
    following student answers the teacher's challenge in their own words (one of those edits
    may be its answer)."""
    return tr(EDITS_OFF) if _answering_challenge() else None


def code_draft() -> str | None:
    """The name under which this tab keeps its unsent typing (``hooks.CODE_DRAFT``): the
    class and challenge a following student answers, so a reload opens on what they typed."""
    if not _answering_challenge():
        return None
    return f"{st.session_state.get(CODE)}:{st.session_state[STATE][1].challenge}"


def moves_shared() -> bool | None:
    """Whether this tab's moves go to the class (``hooks.MOVES_SHARED``): True for its teacher,
    whose every move must be a run of the stage (it publishes them); else None."""
    return True if teacher() is not None else None


def publish_settings(config: RunConfig, view: str) -> None:
    """After the Playground's controls: the teacher's settings go to the class (teacher only)."""
    if teacher() is not None:
        publish(PLAYGROUND, classroom.page_params(PLAYGROUND, {
            **{k: str(v) for k, v in _control_values(config, view).items()},
            **({} if PANEL.name not in st.session_state else
               {PANEL.name: str(st.session_state[PANEL.name])})}))


def _control_values(config: RunConfig, view: str) -> dict[str, object]:
    values: dict[str, object] = {knob.name: getattr(config, knob.name) for knob in RUN_KNOBS}
    values[VIEW.name] = view
    return values


def drawn(config: RunConfig, view: str) -> None:
    """Last thing in the Playground's live part: it has drawn these settings, all of them.

    Said at the end, not when the controls are read: a run stopped half-way by
    another rerun request must leave the class bar asking for it again.
    """
    st.session_state[DRAWN] = _control_values(config, view)
    st.session_state[DRAWN_AT] = time.monotonic()
    if following():
        st.session_state[SENT_GRAPH] = graph_key(cached_picture(config, view))


def stage_settled(graph: str | None) -> None:
    """Last in the Playground's panels: the browser's stage settled on ``graph`` (or None).

    A following tab's stage is rerun by the server (a teacher's move); a rerun the tab
    asks for itself just after (the settle of its previous picture) can make Streamlit
    drop that move's messages (see ``_student_bar``'s ``lost``). The settle names the
    picture the browser has: not the last one sent, the stage draws it again.
    """
    if graph is not None and following() and graph != st.session_state.get(SENT_GRAPH, graph):
        rerun_live_part(PLAYGROUND)
