"""Class mode on the pages: the class bar, following the teacher's page, the student's answer box.

Every page calls ``class_bar`` (from ``ui.setup_page``): for the teacher it
says so and sends the page and its settings to the class; for a following
student it opens the teacher's page with the teacher's settings; for every
student it holds the open question. The push that reruns the bar the moment
the teacher acts is in ``class_push``; the teacher's console in
``class_teacher``; what a tab holds in ``class_session``.

The Playground calls ``run_controls`` (or, drawing its own controls, ``take_settings``
before them and ``publish_settings`` after), then ``drawn`` at the end of its live part.
"""

from __future__ import annotations

import functools
import os
import re
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException, StreamlitPageNotFoundError
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from stockdemo import classroom, lab, lesson, ui
from stockdemo.classroom import LESSON, PLAYGROUND, QUESTIONS, ClassError, ClassState
from stockdemo.config import (
    CLASS_KEY,
    LAB_GRAPH,
    LAB_TAB,
    NODE,
    PANEL,
    RUN_KNOBS,
    SEAT_KEY,
    STEP,
    VIEW,
    RunConfig,
    show_class_code,
)
from stockdemo.ui import class_teacher
from stockdemo.ui.assets import component_js
from stockdemo.ui.class_push import (
    PAGE_SETTLE_S,
    given_state,
    latest_state,
    move_asked,
    page_opened,
    watch_class,
)
from stockdemo.ui.class_session import (
    APPLIED,
    APPLIED_AT,
    ARRIVED_AT,
    CODE,
    FOLLOWING,
    HERE,
    HINT,
    JOIN_MESSAGE,
    class_room,
    current_params,
    following,
    keep_teacher,
    lab_tab_ok,
    leave,
    publish,
    say,
    seat,
    teacher,
    widget_value,
)
from stockdemo.view_payload import graph_key

PLAYGROUND_LIVE = "playground_live"  # the key of the Playground's live fragment
CLASS_PAGE = "pages/classroom.py"
# A student's class bar is rerun by the server the moment the teacher acts, and the
# server also keeps each connected seat present (class_push), so the bar's own timer is
# only a slow safety net. Each tick is a rerun request, and one that lands just after a
# whole-page run can cost that run its last messages (class_push.py); at 2 s, 60 students
# saw that often under load (bench/class_load.py).
POLL_S = 10.0
# ...plus up to this much, fixed per seat: a class's tabs open each page together, and
# with one period their timers all fired in the same instant, every 10 s. When that
# instant followed a move, each tab's timer run came within LOST_S of the drawn move
# and drew the whole page again: 30 whole pages a replica, and that move's last
# student at 1.3 s instead of 0.3 (bench/class_load.py, 60 students). Spread over 5 s,
# a move meets a few timers, not the class.
POLL_SPREAD_S = 5.0
# A bar's run this soon after a drawn run draws the page again (its messages may have
# been dropped: _student_bar). Below BAR_AFTER_S: a bar pushed after a stage move is not one.
LOST_S = 0.5

# The balancer's affinity cookie (deploy/haproxy.cfg's SRV, the Ingress's in deploy/k8s):
# a tab that drops it and reloads lands on the replica with the fewest connections.
AFFINITY_COOKIE = os.environ.get("STOCKDEMO_AFFINITY_COOKIE", "SRV")
if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", AFFINITY_COOKIE):
    raise ValueError(f"STOCKDEMO_AFFINITY_COOKIE is not a cookie name: {AFFINITY_COOKIE!r}")
_MOVER = st.components.v2.component("stockdemo_class_move", html="<span hidden></span>",
                                    js=component_js("class_move"))



def draw_mover() -> None:
    """This replica holds more than its share of the class (stockdemo.replicas): the tab reloads
    without the balancer's cookie, keeping its class and seat (they are in its address)."""
    st.caption(":material/sync_alt: Moving you to a less busy server…")
    _MOVER(data={"cookie": AFFINITY_COOKIE}, key="class_move", height=0)


# session_state keys
DRAWN = "class_drawn"  # the Playground settings this tab last drew
DRAWN_PAGE = "class_drawn_page"  # (page, params) another page last drew from the teacher
BOX = "class_box"  # what the Lesson's answer box shows in this run
SENT_GRAPH = "class_sent_graph"  # the picture a following tab's stage was last sent (its key)
DRAWN_AT = "class_drawn_at"  # when (time.monotonic()) the Playground or the Lesson last drew it all
DRAWN_BOX = "class_drawn_box"  # what the Lesson's answer box last showed, all of it
STATE = "class_state"  # (time.monotonic(), ClassState) of the last poll
FULL_RUN = "_class_full_run"  # set outside the bar's fragment: this run is a whole-page run
LINK_TRIED = "_class_link_tried"
TOGGLED = "_class_toggled"  # Break away or Follow was just pressed
SHOWN = "_class_shown_query"  # the address of the page on screen, as its whole-page run began


def _join(raw_code: object) -> bool:
    """Join as a student; a refusal's message is kept to show once, where it was asked."""
    try:
        code = class_room().join(raw_code, seat())
    except ClassError as error:
        st.session_state[JOIN_MESSAGE] = error
        return False
    st.session_state[CODE] = code
    st.session_state[FOLLOWING] = True
    st.session_state.pop(APPLIED, None)
    st.session_state.pop(JOIN_MESSAGE, None)
    return True


def student_code() -> str | None:
    """The class this tab is in as a student; a join link (?class=CODE) joins it once."""
    if CODE not in st.session_state and teacher() is None:
        raw = st.query_params.get_all(CLASS_KEY)
        if raw and st.session_state.get(LINK_TRIED) != raw:
            st.session_state[LINK_TRIED] = raw
            _join(raw)
    code = st.session_state.get(CODE)
    if code is not None:
        # Keep the class and seat in the address: a reload, or a reconnect to
        # another replica, is still this student with their answers.
        if st.query_params.get(CLASS_KEY) != code:
            st.query_params[CLASS_KEY] = code
        if st.query_params.get(SEAT_KEY) != seat():
            st.query_params[SEAT_KEY] = seat()
    return code


def role() -> str | None:
    """This tab in a class: "teacher", "student" (following or exploring), or None."""
    if teacher() is not None:
        return "teacher"
    return "student" if student_code() is not None else None


# --------------------------------------------------------------------------- the class bar

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
        if page == CLASS_PAGE:
            return  # the console: the class stays on the page it was shown last
        st.caption(f":material/podium: You are teaching class **{show_class_code(current.code)}**: "
                   "students who follow see this page, with your settings.")
        if page != PLAYGROUND:  # the stage says its settings itself (publish_settings)
            publish(page, current_params(page, arrived))
        return
    if code is None:
        return
    if page_opened():  # the push ran this page whole: the browser has it, not its address yet
        st.query_params[CLASS_KEY] = code  # (a write sends the whole address)
    st.session_state[FULL_RUN] = True
    st.session_state[SHOWN] = st.query_params.to_dict()  # this page's address, as it opens
    st.fragment(_student_bar, run_every=bar_period(seat()))(page)


def bar_period(seat_id: str | None) -> float:
    """The class bar's timer period of a tab with this seat: POLL_S plus its own share of
    POLL_SPREAD_S (the same on each run and reload, different from seat to seat)."""
    share = zlib.crc32((seat_id or "").encode()) % 1000 / 1000
    return round(POLL_S + share * POLL_SPREAD_S, 3)


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
    # Streamlit then takes the tab to be there while it shows this one. Seen in
    # bench/class_load.py under load. The page to open again is the one it shows (or,
    # following, the teacher's), with its own settings, not that old address's.
    running = page if full_run else (_running_page() or page)
    # A timer's run that starts just after another run drew the page (whole, or the stage
    # alone) may have made Streamlit drop that run's messages: a rerun request that comes
    # before the server has sent them starts a new ScriptRunner, and the old one's messages
    # still waiting are ignored (app_session.py, "non-current ScriptRunner"; seen in
    # bench/class_load.py: a follower's stage kept the T before a move, 1 to 5 times in
    # 300). Draw it again rather than trust it.
    lost = not full_run and time.monotonic() - st.session_state.get(DRAWN_AT, -60.0) < LOST_S
    if not is_following or page != PLAYGROUND:
        watch_class(code, "live", on=False)
    try:
        # A pushed run takes the class as the push thread read it to push it: the thread tells
        # the store every HEARTBEAT_S which tabs are here, so the run needs no round trip to
        # Redis of its own (30 students a replica, on each page change). Any other run (a join,
        # a reload, the timer), and one just after Follow or Break away, reads the store.
        state = None if st.session_state.get(TOGGLED) else _given_state(code)
        if state is None:
            state = class_room().poll(code, seat(), is_following)
    except ClassError as error:
        say(error)
        # The question as last seen stays answerable: an answer is kept here and sent later.
        last = st.session_state.get(STATE)
        if last is not None and not (page == LESSON and last[1].question == _lesson_step()):
            _question_box(last[1], code, last[1].question, in_bar=True)
        return
    if state is None:
        watch_class(None)
        leave()
        st.info("The class has ended. Everything here keeps working on its own.",
                icon=":material/door_open:")
        return
    st.session_state[STATE] = (time.monotonic(), state)
    # Another page opens before this run draws anything. A pushed run names the page the
    # server last ran; if the browser has not applied that page yet (a page change that came
    # just before, class_push.PAGE_SETTLE_S), it takes the run for a page change and empties
    # the page, and a block drawn here next lands in nothing: "Bad delta path" in the
    # browser, a blank tab until a reload. With nothing drawn the run only ends, and the new
    # page draws whole.
    if is_following and state.page != running:
        _open_page(state)
    elif running != page:
        st.switch_page(str(ui.ROOT / page), query_params=st.session_state.get(SHOWN, {}))
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if is_following:
        row.caption(f":material/group: Class **{show_class_code(code)}**: following the teacher.")
        row.button("Break away", key="class_break_away", icon=":material/explore:",
                   on_click=_set_following, args=(False,), help="Move the controls yourself; "
                   "the teacher's moves stop changing your page until you follow again.")
    else:
        row.caption(f":material/explore: Class **{show_class_code(code)}**: exploring on your own.")
        row.button("Follow the teacher", key="class_follow", icon=":material/group:",
                   type="primary", on_click=_set_following, args=(True,))
    rerun = is_following and _take(state, page, full_run) and not full_run
    redraw = lost and page in (PLAYGROUND, LESSON)
    if redraw:
        st.session_state.pop(DRAWN, None)
        st.session_state.pop(DRAWN_BOX, None)
    on_lesson_question = page == LESSON and state.question == _lesson_step()
    if on_lesson_question:
        # The question is drawn once, in the lesson where it is asked (lesson_question).
        rerun = rerun or (not full_run and st.session_state.get(DRAWN_BOX) != _box_key(state))
    else:
        _question_box(state, code, state.question, in_bar=True)
    if (st.session_state.pop(TOGGLED, False) and not full_run) or redraw:
        # The whole page again, not a part of it: a part's rerun would draw into blocks
        # the browser may never have received ("Bad delta path" in the browser: a blank
        # tab). Last, once the box above has taken an answer this run was sent with.
        st.rerun(scope="app")
    if rerun:
        _rerun_live_part(page)


def _pushed_state(code: str) -> ClassState | None:
    """The class as the push thread read it a moment ago; None if it has not, or if that read
    is older than a class this tab has already seen or taken (the bar's own poll can be
    newer, and an older move taken here would undo a newer one)."""
    return _not_older(latest_state(code))


def _given_state(code: str) -> ClassState | None:
    """The read the push thread pushed this run with (class_push.given_state), if it is this
    class's and not older than what this tab has seen or taken."""
    state = given_state()
    return _not_older(state) if state is not None and state.code == code else None


def _not_older(state: ClassState | None) -> ClassState | None:
    """``state``, unless it is older than a class this tab has already seen or taken."""
    seen = st.session_state.get(STATE)
    applied = st.session_state.get(APPLIED)
    newest = max(seen[1].version if seen else 0, applied[0] if applied else 0)
    return state if state is not None and state.version >= newest else None


def _lesson_step() -> int:
    """The step the Lesson shows in this run, read as ui.lesson_step reads it (the address
    first): the bar runs before the lesson and must agree with it on where the question goes."""
    return STEP.parse(st.query_params.get_all(STEP.name) or st.session_state.get("lesson_step"))[0]


def _running_page() -> str | None:
    """The page this run runs as (its file relative to the app root), as Streamlit sees it."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash)
    return _page_of(info.get("script_path")) if info else None


@functools.lru_cache(maxsize=64)
def _page_of(script_path: str | None) -> str | None:
    """A page's script path -> its file relative to the app root (resolving it on each bar
    run was 2 % of a replica's time with 30 students changing page)."""
    try:
        return Path(script_path).resolve().relative_to(ui.ROOT).as_posix()
    except (TypeError, ValueError):
        return None


def _set_following(on: bool) -> None:
    st.session_state[FOLLOWING] = on
    st.session_state.pop(APPLIED, None)  # following again takes the teacher's settings now
    st.session_state[TOGGLED] = True  # the page's own controls change too (the Lesson's Next)


def _open_page(state: ClassState) -> None:
    """Open the teacher's page, with the teacher's settings in its link (a reload keeps them)."""
    query = state.link_query(seat(), ui.presenting())
    st.session_state.pop(APPLIED, None)
    try:
        st.switch_page(str(ui.ROOT / state.page), query_params=query)
    except StreamlitPageNotFoundError:
        # Where the app's pages are not registered (AppTest running one page file):
        # a link to follow by hand.
        st.markdown(f"The teacher is on [{ui.page_url(state.page)}]"
                    f"({ui.page_url(state.page)}?{urlencode(query)}).")


def _take(state: ClassState, page: str, full_run: bool) -> bool:
    """Take the teacher's settings on the teacher's page -> whether this page must rerun to show them.

    Asked on every poll, and answered from what the page last drew, not from what
    was last taken: a rerun request that a busy server merged away is asked again.
    ``full_run``: this is a whole-page run, whose widgets come after and take them now.
    """
    applied = st.session_state.get(APPLIED)
    if applied is None or applied[0] != state.version or applied[1] != page:
        _apply(page, state.params)
        st.session_state[APPLIED] = applied = (state.version, page, state.params)
        st.session_state[APPLIED_AT] = time.monotonic()
    elif page != PLAYGROUND and _touched(page, state.params):
        _apply(page, state.params)  # a tab or a menu moved by hand: back to the teacher's
        st.toast(HINT, icon=":material/group:")
        st.session_state.pop(DRAWN_PAGE, None)
    if page == PLAYGROUND:
        return st.session_state.get(DRAWN) != _control_values(*state.run_settings())
    if full_run:
        st.session_state[DRAWN_PAGE] = (page, applied[2])  # this run draws them
    return st.session_state.get(DRAWN_PAGE) != (page, applied[2])


def _touched(page: str, params: dict[str, str]) -> bool:
    """A control of the page holds another value than the teacher's (moved by hand).

    Only controls the tab holds are compared: a page draws some of its controls only
    at times (the open experiment's, an open expander's), and the rest are not there.
    """
    for knob in classroom.followed_knobs(page):
        if knob is STEP:
            held = st.session_state.get("lesson_step")
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


def _apply(page: str, params: dict[str, str]) -> None:
    """Put a page's settings into its controls, before they are drawn."""
    for knob in classroom.followed_knobs(page):
        value, _ = knob.parse(params.get(knob.name))
        if knob is STEP:
            st.session_state["lesson_step"] = value
            if st.query_params.get(STEP.name) != str(value):
                st.query_params[STEP.name] = str(value)
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
    # The teacher's settings win over the page's own link, read once per session (ui.url_messages).
    st.session_state[f"_url_checked:{page}"] = []


def _rerun_live_part(page: str) -> None:
    """Show the teacher's new settings: rerun the Playground's live fragment, else the page.

    The Playground's live part is a fragment keyed PLAYGROUND_LIVE; rerunning only it
    skips the page frame (menu, presets), which a whole class pays for at the same
    moment on every move (bench/class_load.py). Streamlit 1.67 offers a keyed rerun
    only from a widget callback, and this runs from the poll's timer, so the request
    is queued the way ``st.rerun`` queues it: it starts once this fragment run ends.
    """
    ctx = get_script_run_ctx()
    if page != PLAYGROUND or ctx is None or ctx.script_requests is None:
        st.rerun(scope="app")
    if time.monotonic() - st.session_state.get(ARRIVED_AT, -PAGE_SETTLE_S) < PAGE_SETTLE_S:
        # Just arrived on the Playground (the teacher opened it): the browser may not have
        # applied that page change yet, and a run of the stage alone then went missing in
        # it (the stage's element sent, never drawn: the student saw the page without its
        # graph, tests/browser/test_classroom_mode_browser.py, 2-3 students in 5 classes).
        # The whole page, as the push does (class_push.Pusher._settled).
        st.rerun(scope="app")
    try:
        fragments = ctx.fragment_storage.resolve_target(PLAYGROUND_LIVE)
    except StreamlitAPIException:
        st.rerun(scope="app")
    ctx.script_requests.request_rerun(RerunData(
        query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
        fragment_id_queue=fragments, is_fragment_scoped_rerun=True,
        cached_message_hashes=ctx.cached_message_hashes, context_info=ctx.context_info))


# --------------------------------------------------------------------------- the Playground

def take_settings() -> tuple[RunConfig, str] | None:
    """Before the Playground's controls: a following student's are set to the teacher's
    settings -> those settings; None for anyone else (their controls are their own).

    A browser that has not drawn the teacher's move yet still sends its old values
    with its next message, and those must not undo the move (seen in bench/class_load.py).
    """
    code = st.session_state.get(CODE)
    if not following() or code is None:
        return None
    # The server reruns this part the moment the teacher moves (class_push): take the
    # move here, in the same run, rather than in the class bar and then again here.
    watch_class(code, "live")
    state = _pushed_state(code)  # what the push thread read to push this run, if it did
    if state is None:
        try:
            state = class_room().poll(code, seat(), True)
        except ClassError:
            state = None  # the class bar says so
    if state is not None and state.page == PLAYGROUND:
        _take(state, PLAYGROUND, full_run=False)
    applied = st.session_state.get(APPLIED)
    if applied is None or applied[1] != PLAYGROUND:
        return None
    _apply(PLAYGROUND, applied[2])
    config, _ = RunConfig.from_params(applied[2])
    view, _ = VIEW.parse(applied[2].get(VIEW.name))
    return config, view


def following_hint() -> str | None:
    """For the Playground's stage (ui.stage_spec's ``locked``): the hint, while this tab follows."""
    return HINT if following() else None


def publish_settings(config: RunConfig, view: str) -> None:
    """After the Playground's controls: the teacher's settings go to the class (teacher only)."""
    if teacher() is not None:
        publish(PLAYGROUND, classroom.page_params(PLAYGROUND, {
            **{k: str(v) for k, v in _control_values(config, view).items()},
            **({} if "panel" not in st.session_state else
               {"panel": str(st.session_state["panel"])})}))


def run_controls() -> tuple[RunConfig, str]:
    """The Playground's controls (ui.run_controls), in class mode -> (RunConfig, graph view).

    A following student's controls hold the teacher's settings; to move one, a
    student breaks away. The teacher's moves go to the class.
    """
    take_settings()
    config, view = ui.run_controls()
    publish_settings(config, view)
    return config, view


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
        from stockdemo.ui.graph_view import cached_picture  # the package imports this module

        st.session_state[SENT_GRAPH] = graph_key(cached_picture(config, view))


def stage_settled(graph: str | None) -> None:
    """Last in the Playground's panels: the browser's stage settled on ``graph`` (or None).

    A following tab's stage is rerun by the server (a teacher's move); a rerun the tab
    asks for itself just after (the settle of its previous picture) can make Streamlit
    drop that move's messages (see ``_student_bar``'s ``lost``). The settle names the
    picture the browser has: not the last one sent, the stage draws it again.
    """
    if graph is not None and following() and graph != st.session_state.get(SENT_GRAPH, graph):
        _rerun_live_part(PLAYGROUND)


# --------------------------------------------------------------------------- questions

def _state() -> ClassState | None:
    """The class as the bar saw it this run, else as it is now, else as last seen (Redis down)."""
    seen = st.session_state.get(STATE)
    if seen is not None and time.monotonic() - seen[0] < 0.5:
        return seen[1]
    try:
        return class_room().poll(st.session_state[CODE], None, False)
    except ClassError:
        return None if seen is None else seen[1]


def _box_key(state: ClassState) -> tuple:
    return state.question, state.revealed, state.locked()


@dataclass(frozen=True)
class InClass:
    """What a Lesson step may show in class mode, besides the question the class parts drew."""

    revealed: bool  # the class has seen the live answer: its graph may be drawn
    may_explore: bool  # the step's link to its experiment (which computes the answer)


def lesson_question(number: int) -> InClass | None:
    """A Lesson step's question as the class runs it; None outside a class (the page asks it).

    The teacher gets the question with the answers console; a student the question once,
    with their answer box, and never the reveal, the answer or the experiment before the
    teacher reveals it (none of them is sent to the browser).
    """
    if teacher() is not None:
        return InClass(class_teacher.lesson_console(number), may_explore=True)
    code = st.session_state.get(CODE)
    if code is None:
        return None
    state = _state()
    if state is None:  # in a class whose server does not answer: still the teacher's to reveal
        st.subheader(f":material/help: {lesson.STEPS[number - 1].question}", anchor=False)
        return InClass(revealed=False, may_explore=False)
    st.session_state[BOX] = _box_key(state)
    revealed = _question_box(state, code, number, in_bar=False)
    return InClass(revealed, may_explore=revealed)


def lesson_drawn() -> None:
    """Last thing in the Lesson's live part: the class's question box on it is drawn, all of it.

    Said at the end (as ``drawn`` on the Playground): a run stopped half-way by another
    rerun request must leave the class bar asking for it again.
    """
    if BOX in st.session_state:
        st.session_state[DRAWN_BOX] = st.session_state.pop(BOX)
        st.session_state[DRAWN_AT] = time.monotonic()


def _answer_key(code: str, step: int) -> str:
    return f"class_answer:{code}:{step}"


def _pending_key(code: str, step: int) -> str:
    return f"class_pending:{code}:{step}"


def _mine(code: str, step: int, is_open: bool) -> str | None:
    """This seat's answer: kept in the tab as sent, checked against the class store.

    An answer the store does not hold while the question is still open is sent
    again: one given while Redis was down, or one Redis lost when it restarted
    before writing it to disk. The tab remembers what was sent.
    """
    key, pending = _answer_key(code, step), _pending_key(code, step)
    mine = st.session_state.get(key)
    try:
        stored = class_room().my_answer(code, seat(), step)
        if stored is None and mine is not None and is_open:
            class_room().answer(code, seat(), mine)
            stored = mine
    except ClassError:
        return mine
    if stored is not None:
        st.session_state[key] = stored
        st.session_state.pop(pending, None)
    return stored


def _question_box(state: ClassState, code: str, step: int | None, in_bar: bool) -> bool:
    """A lesson question for a student -> whether its live answer is out.

    Open: the answer box (or the answer given), with the countdown. Revealed: the
    live answer beside the guess. In the bar, only the open question is shown.
    """
    if step is None:
        return False
    question = QUESTIONS[step]
    current = state.question == step
    revealed = current and state.revealed
    live = state.answer if revealed else None
    if not current:
        if in_bar:
            return False
        try:
            live = class_room().revealed_answer(code, step)
        except ClassError:
            live = None
        revealed = live is not None
    mine = _mine(code, step, current and not state.locked())
    with st.container(border=True, key=f"class_question_{step}_{'bar' if in_bar else 'lesson'}"):
        st.markdown(f"**Question {step}:** {lesson.STEPS[step - 1].question}")
        if revealed and live:
            guess, answer = st.columns(2)
            guess.metric("Your guess", mine if mine is not None else "none")
            answer.metric(live["label"], live["value"])
            right = question.correct(live["value"])
            if mine is not None and right is not None:
                if question.is_right(mine, right):
                    st.success("Right!", icon=":material/check_circle:")
                else:
                    st.info(f"The live run says **{right}**.", icon=":material/science:")
            st.caption(live["detail"])
        elif not current:
            st.markdown("The teacher opens this question for the class: answer it then.")
        elif mine is not None and st.session_state.get(_pending_key(code, step)):
            st.warning(f"Your answer **{mine}** is kept here: it is sent as soon as the class "
                       "server answers again.", icon=":material/cloud_upload:")
        elif mine is not None:
            st.success(f"Your answer: **{mine}**. Wait for the teacher's reveal.",
                       icon=":material/check:")
            _countdown(state)
        elif state.locked():
            st.markdown("Time is up: answers are locked. Wait for the teacher's reveal.")
        else:
            _countdown(state)
            _answer_form(code, step)
    return revealed


def _countdown(state: ClassState) -> None:
    left = state.seconds_left()
    if left is not None:
        class_teacher.countdown(left)


def _answer_form(code: str, step: int) -> None:
    question = QUESTIONS[step]
    with st.form(f"class_answer_form_{step}", border=False, enter_to_submit=True):
        if question.kind == "number":
            value = st.number_input(f"A whole number from {question.low} to {question.high}",
                                    min_value=question.low, max_value=question.high,
                                    value=None, step=1, key=f"class_number_{step}")
        else:
            value = st.radio("Your answer", question.choices, index=None,
                             key=f"class_choice_{step}", horizontal=True)
        sent = st.form_submit_button("Send my answer", type="primary")
    if not sent:
        return
    if value is None:
        st.warning("Choose or type an answer first.", icon=":material/edit:")
        return
    try:
        st.session_state[_answer_key(code, step)] = class_room().answer(code, seat(), value)
    except classroom.ClassUnavailable as error:
        # Kept and sent again by the next poll that reaches the class server (_mine).
        st.session_state[_answer_key(code, step)] = QUESTIONS[step].parse(value)[0]
        st.session_state[_pending_key(code, step)] = True
        say(error)
        return
    except ClassError as error:
        say(error)
        return
    # The box again, as it is now: the answer given, and no form to send a second.
    try:
        st.rerun(scope="fragment")
    except StreamlitAPIException:
        st.rerun()


# --------------------------------------------------------------------------- joining

def join_box() -> None:
    """A student types the code from the teacher's screen; a refusal shows under it, at once."""
    with st.form("class_join", border=True, enter_to_submit=True):
        typed = st.text_input("Class code", max_chars=16, placeholder="K7QM-3XPA",
                              key="class_join_code",
                              help="The code on the teacher's screen. Nothing about you is asked "
                                   "or stored.")
        if st.form_submit_button("Join the class", type="primary", icon=":material/login:"):
            if _join(typed):
                st.rerun()
            say(st.session_state.pop(JOIN_MESSAGE))


__all__ = ["HINT", "InClass", "PLAYGROUND_LIVE", "class_bar", "drawn", "following", "join_box",
           "leave", "lesson_drawn", "lesson_question", "publish_settings", "run_controls", "following_hint",
           "stage_settled", "student_code", "take_settings", "teacher"]
