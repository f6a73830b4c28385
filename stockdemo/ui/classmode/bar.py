"""The class bar on every page: the teacher's line, and a student's, which follows the teacher.

Every page opens it (``hooks.PAGE_OPENED``): for the teacher it says so and sends the
page and its settings to the class; for a following student it opens the teacher's page
with the teacher's settings; for every student it holds the open question. The push that
reruns the bar the moment the teacher acts is in ``push.py``; the teacher's console in
``console.py``; what a tab holds in ``session.py``.
"""

from __future__ import annotations

import functools
import time
import zlib
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from stockdemo.classroom import LESSON, PLAYGROUND, ClassError, ClassState
from stockdemo.config import CLASS_KEY, show_class_code
from stockdemo.i18n import tr
from stockdemo.ui import compat, steps
from stockdemo.ui.classmode import challenge, gallery
from stockdemo.ui.classmode.follow import pushed_read, rerun_live_part, take
from stockdemo.ui.classmode.join import student_code
from stockdemo.ui.classmode.keeper import keep_teacher
from stockdemo.ui.classmode.keys import (
    APPLIED,
    ARRIVED_AT,
    CODE,
    DRAWN,
    DRAWN_AT,
    DRAWN_BOX,
    FOLLOWING,
    FULL_RUN,
    HERE,
    JOIN_MESSAGE,
    SHOWN,
    STATE,
    TOGGLED,
)
from stockdemo.ui.classmode.mover import draw_mover
from stockdemo.ui.classmode.questions import box_key, question_box
from stockdemo.ui.classmode.session import (
    class_room,
    current_params,
    following,
    leave,
    publish,
    say,
    seat,
    teacher,
)
from stockdemo.ui.classmode.watch import move_asked, page_opened, watch_class
from stockdemo.ui.language import fragment
from stockdemo.ui.routes import ROOT, page_url, presenting

CLASS_PAGE = "pages/classroom.py"
# The teacher's own pages: the console, and a lesson being written (with its answers). The
# class stays on the page it was shown last.
PRIVATE_PAGES = (CLASS_PAGE, "pages/author.py")
# A student's class bar is rerun by the server the moment the teacher acts, and the
# server also keeps each connected seat present (push.py), so the bar's own timer is
# only a slow safety net. Each tick is a rerun request, and a class's ticks add up: a long
# period keeps them few.
POLL_S = 10.0
# ...plus up to this much, fixed per seat: a class's tabs open each page together, and
# with one period their timers would all fire in the same instant, each drawing the whole
# page again if it came within LOST_S of a move. Spread, a move meets a few timers, not
# the class.
POLL_SPREAD_S = 5.0
# A bar's run this soon after a drawn run draws the page again (its messages may have
# been dropped: _student_bar). Below BAR_AFTER_S: a bar pushed after a stage move is not one.
LOST_S = 0.5


def class_bar(page: str) -> None:
    """The class line at the top of a page (``page``: its file relative to the app root)."""
    arrived = st.session_state.get(HERE) != page
    st.session_state[HERE] = page
    if arrived:
        st.session_state[ARRIVED_AT] = time.monotonic()
    keep_teacher()
    code = student_code()
    if JOIN_MESSAGE in st.session_state:
        say(st.session_state.pop(JOIN_MESSAGE))  # a join link that was refused
    if (current := teacher()) is not None:
        if page in PRIVATE_PAGES:
            return
        st.caption(":material/podium: " + tr("You are teaching class **{code}**: students who follow "
                                             "see this page, with your settings.",
                                             code=show_class_code(current.code)))
        if page != PLAYGROUND:  # the stage says its settings itself (publish_settings)
            publish(page, current_params(page, arrived))
        if page == challenge.CODE_PAGE:
            gallery.teacher_console(current)
        return
    if code is None:
        return
    if page_opened():  # the push ran this page whole: the browser has it, not its address yet
        st.query_params[CLASS_KEY] = code  # (a write sends the whole address)
    st.session_state[FULL_RUN] = True
    st.session_state[SHOWN] = st.query_params.to_dict()  # this page's address, as it opens
    fragment(_bar_of(page), run_every=bar_period(seat()))()


def bar_period(seat_id: str | None) -> float:
    """The class bar's timer period of a tab with this seat: POLL_S plus its own share of
    POLL_SPREAD_S (the same on each run and reload, different from seat to seat)."""
    share = zlib.crc32((seat_id or "").encode()) % 1000 / 1000
    return round(POLL_S + share * POLL_SPREAD_S, 3)


@functools.lru_cache(maxsize=32)
def _bar_of(page: str):
    """The class bar of one page, with a fragment id of its own: the browser's timer of the
    page before can fire just after a pushed page change, and with one id for every page
    Streamlit ran the new page's bar as the old page and the browser emptied the tab ("Bad
    delta path"); with its own id, the old bar is gone and Streamlit drops the run."""
    return compat.fragment_of_its_own(_student_bar, page, page)


def _student_bar(page: str) -> None:  # a fragment, with a timer (class_bar)
    # Outside this fragment only whole-page runs set the flag: a fragment run that
    # takes new settings must rerun the page; a whole-page run takes them in time.
    full_run = st.session_state.pop(FULL_RUN, False)
    code = st.session_state.get(CODE)
    is_following = following()
    watch_class(code, seat=seat(), following=is_following)
    if code is None:
        return
    if move_asked():
        draw_mover()
        return
    # A rerun asked for on the page before (the tab's timer, or a push, sent while this
    # bar was opening the teacher's page) runs as a run of that page, with its address:
    # Streamlit then takes the tab to be there while it shows this one. The page to open
    # again is the one it shows (or, following, the teacher's), with its own settings, not
    # that old address's.
    running = page if full_run else (_running_page() or page)
    # A timer's run that starts just after another run drew the page (whole, or the stage
    # alone) may have made Streamlit drop that run's messages: a rerun request that comes
    # before the server has sent them starts a new ScriptRunner, and the old one's messages
    # still waiting are ignored (app_session.py, "non-current ScriptRunner"). Draw it
    # again rather than trust it.
    lost = not full_run and time.monotonic() - st.session_state.get(DRAWN_AT, -60.0) < LOST_S
    if not is_following or page != PLAYGROUND:
        watch_class(code, "live", on=False)
    try:
        # A pushed run takes the class as the push thread read it to push it: the thread tells
        # the store every HEARTBEAT_S which tabs are here, so the run needs no round trip to
        # Redis of its own. Any other run (a join, a reload, the timer), and one just after
        # Follow or Break away, reads the store.
        state = None if st.session_state.get(TOGGLED) else pushed_read(code)
        if state is None:
            state = class_room().poll(code, seat(), is_following)
    except ClassError as error:
        say(error)
        # The question as last seen stays answerable: an answer is kept here and sent later.
        last = st.session_state.get(STATE)
        if last is not None and not (page == LESSON and last[1].question == steps.current_step()):
            question_box(last[1], code, last[1].question, in_bar=True)
        return
    if state is None:
        watch_class(None)
        leave()
        st.info(tr("The class has ended. Everything here keeps working on its own."),
                icon=":material/door_open:")
        return
    st.session_state[STATE] = (time.monotonic(), state)
    # Another page opens before this run draws anything. A pushed run names the page the
    # server last ran; if the browser has not applied that page yet (a page change that came
    # just before, push.PAGE_SETTLE_S), it takes the run for a page change and empties
    # the page, and a block drawn here next lands in nothing: "Bad delta path" in the
    # browser, a blank tab until a reload. With nothing drawn the run only ends, and the new
    # page draws whole.
    if is_following and state.page != running:
        _open_page(state)
    elif running != page:
        st.switch_page(str(ROOT / page), query_params=st.session_state.get(SHOWN, {}))
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if is_following:
        row.caption(":material/group: " + tr("Class **{code}**: following the teacher.",
                                             code=show_class_code(code)))
        row.button(tr("Break away"), key="class_break_away", icon=":material/explore:",
                   on_click=_set_following, args=(False,), help=tr("Move the controls yourself; "
                   "the teacher's moves stop changing your page until you follow again."))
    else:
        row.caption(":material/explore: " + tr("Class **{code}**: exploring on your own.",
                                               code=show_class_code(code)))
        row.button(tr("Follow the teacher"), key="class_follow", icon=":material/group:",
                   type="primary", on_click=_set_following, args=(True,))
    rerun = is_following and take(state, page, full_run) and not full_run
    redraw = lost and page in (PLAYGROUND, LESSON)
    if redraw:
        st.session_state.pop(DRAWN, None)
        st.session_state.pop(DRAWN_BOX, None)
    on_lesson_question = page == LESSON and state.question == steps.current_step()
    if on_lesson_question:
        # The question is drawn once, in the lesson where it is asked (lesson_question).
        rerun = rerun or (not full_run and st.session_state.get(DRAWN_BOX) != box_key(state))
    elif not (state.revealed and challenge.open_here(state, page)):
        # (A question already revealed would push the challenge's editor below the fold.)
        question_box(state, code, state.question, in_bar=True)
    if challenge.open_here(state, page):
        challenge.student_box(state, code)
    if (st.session_state.pop(TOGGLED, False) and not full_run) or redraw:
        # The whole page again, not a part of it: a part's rerun would draw into blocks
        # the browser may never have received ("Bad delta path" in the browser: a blank
        # tab). Last, once the box above has taken an answer this run was sent with.
        st.rerun(scope="app")
    if rerun:
        rerun_live_part(page)


def _running_page() -> str | None:
    """The page this run runs as (its file relative to the app root), as Streamlit sees it."""
    return _page_of(compat.running_page_script())


@functools.lru_cache(maxsize=64)
def _page_of(script_path: str | None) -> str | None:
    """A page's script path -> its file relative to the app root (resolved once: every bar
    run asks)."""
    try:
        return Path(script_path).resolve().relative_to(ROOT).as_posix()
    except (TypeError, ValueError):
        return None


def _set_following(on: bool) -> None:
    st.session_state[FOLLOWING] = on
    st.session_state.pop(APPLIED, None)  # following again takes the teacher's settings now
    st.session_state[TOGGLED] = True  # the page's own controls change too (the Lesson's Next)


def _open_page(state: ClassState) -> None:
    """Open the teacher's page, with the teacher's settings in its link (a reload keeps them)."""
    query = state.link_query(seat(), presenting())
    st.session_state.pop(APPLIED, None)
    try:
        st.switch_page(str(ROOT / state.page), query_params=query)
    except StreamlitPageNotFoundError:
        # Where the app's pages are not registered (AppTest running one page file):
        # a link to follow by hand.
        st.markdown(tr("The teacher is on [{page}]({link}).", page=page_url(state.page),
                       link=f"{page_url(state.page)}?{urlencode(query)}"))
