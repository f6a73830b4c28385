"""Class mode on the pages: the teacher's console, the students' follow bar and answer box.

State per browser tab (``st.session_state``): the teacher's ``Teacher`` (code
and secret key), or a student's class code, seat token, whether they follow,
and the class version they last applied. Class state itself lives in
``stockdemo.classroom`` (memory or Redis), never here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from urllib.parse import urlencode, urlsplit

import plotly.graph_objects as go
import segno
import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from stockdemo import classroom, lesson, theme, ui
from stockdemo.classroom import QUESTIONS, ClassError, Classroom, ClassState, Teacher
from stockdemo.config import (
    CLASS_KEY,
    RUN_KNOBS,
    SEAT_KEY,
    STEP,
    VIEW,
    RunConfig,
    parse_class_code,
    parse_seat,
    show_class_code,
)

PLAYGROUND_LIVE = "playground_live"  # the key of the Playground's live fragment
# A student's class bar is rerun by the server the moment the teacher acts (_Pusher),
# so its own timer is only a heartbeat (presence counts a seat for 5 s) and a safety
# net. Polling at 0.5 s instead cost ~7 ms of server CPU per poll (0.2-0.3 core per
# replica of 15 students) and still left p95 at 0.8-1.1 s with 30 students.
POLL_S = 2.0
PUSH_S = 0.1  # how often each server process looks at the versions of its students' classes
BAR_AFTER_S = 0.8  # a pushed class bar reruns this long after the live part it follows
TEACHER_REFRESH_S = 1.0  # the teacher's counts and distribution

# session_state keys
TEACHER = "class_teacher"
CODE = "class_code"
SEAT = "class_seat"
FOLLOWING = "class_following"
APPLIED = "class_applied"  # (version, settings) a following student last took
PUBLISHED = "class_published"  # settings and step the teacher last sent
DRAWN = "class_drawn"  # the Playground settings this tab last drew
DRAWN_STEP = "class_drawn_step"  # the lesson step this tab last drew
FULL_RUN = "_class_full_run"  # set outside the poll fragment: this run is a whole-page run
JOIN_MESSAGE = "class_join_message"
_LOGGER = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def class_room() -> Classroom:
    """One per server process: in memory, or Redis when STOCKDEMO_REDIS_URL is set."""
    return classroom.open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))


class _Pusher:
    """Reruns the class parts of every student page in this process as soon as their class changes.

    One thread per process reads the version of every class its students are in,
    one round trip each PUSH_S, and on a change asks Streamlit to rerun, for each
    of those students, the Playground's live part (which takes the teacher's
    settings itself) and, a moment later and only if what it shows changed (the
    step, the open question, the reveal, the end), the class bar, as the
    browser's own timer would. A move so costs each student one run.
    Streamlit has no public way to start a session's run from the server: this
    uses ``Runtime.get_app_session`` (documented thread-safe) and the session's
    ``request_rerun`` on the server's event loop. Anything missing (no runtime, as
    in AppTest; a session gone) leaves the bar's own timer to do it.
    """

    def __init__(self, room: Classroom, autostart: bool = True) -> None:
        self.room = room
        self.autostart = autostart  # False: no thread, ``_look`` is called by hand (tests)
        self.lock = threading.Lock()
        # code -> session id -> {"bar": rerun of its class bar, "live": of its live part}
        self.members: dict[str, dict[str, dict[str, ClientState]]] = {}
        self.versions: dict[str, tuple[int, tuple[str, ...]]] = {}  # code -> last seen (version, bar)
        self.thread: threading.Thread | None = None

    def watch(self, session_id: str, code: str | None, part: str = "bar",
              rerun: ClientState | None = None) -> None:
        """Rerun this session's ``part`` when class ``code`` changes; ``rerun`` None: not that part.

        ``code`` None: this session is in no class any more.
        """
        with self.lock:
            for other, seats in self.members.items():
                if other != code:
                    seats.pop(session_id, None)
            if code is None:
                return
            parts = self.members.setdefault(code, {}).setdefault(session_id, {})
            if rerun is None:
                parts.pop(part, None)
            else:
                parts[part] = rerun
            if self.thread is None and self.autostart:
                self.thread = threading.Thread(target=self._loop, name="class-push", daemon=True)
                self.thread.start()

    def _loop(self) -> None:
        while True:
            time.sleep(PUSH_S)
            try:
                self._look()
            except Exception:  # never let the thread die: the bars' timers would be all that is left
                _LOGGER.exception("class push: one look failed")

    def _look(self) -> None:
        with self.lock:
            for seats in self.members.values():
                for session_id in [sid for sid, parts in seats.items() if not parts]:
                    del seats[session_id]
            for code in [c for c, seats in self.members.items() if not seats]:
                del self.members[code]  # nobody here is in it any more (ended, left, closed)
                self.versions.pop(code, None)
            watched = {code: {sid: dict(parts) for sid, parts in seats.items()}
                       for code, seats in self.members.items()}
        if not watched:
            return
        try:
            versions = self.room.versions(watched)
        except ClassError:
            return  # Redis is down: the bars' own timers say so and carry on
        for code, (version, bar) in versions.items():
            last_version, last_bar = self.versions.setdefault(code, (version, bar))
            if version != last_version:
                self.versions[code] = (version, bar)
                for session_id, parts in watched[code].items():
                    self._push(session_id, parts, bar_too=bar != last_bar)

    def _push(self, session_id: str, parts: dict[str, ClientState], bar_too: bool = True) -> None:
        """Rerun a member's live part (a move) and, if ``bar_too``, its class bar.

        A member with no live part here (the Lesson, the Class page) gets its bar at once.
        """
        if not Runtime.exists():
            return
        runtime = Runtime.instance()
        session = runtime.get_app_session(session_id)
        if session is None:  # the tab closed
            self.watch(session_id, None)
            return

        def rerun(part: str) -> None:
            if session.has_fragment(parts[part].fragment_id):
                session.request_rerun(parts[part])
            elif part == "live" and "bar" in parts and session.has_fragment(parts["bar"].fragment_id):
                # The live part is not there this moment (the tab is in a whole-page run, or
                # left the Playground): the bar takes the move and asks for the live part itself.
                session.request_rerun(parts["bar"])

        loop = runtime._get_async_objs().eventloop
        for part, delay in self.targets(parts, bar_too):
            if delay:
                loop.call_soon_threadsafe(loop.call_later, delay, rerun, part)
            else:
                loop.call_soon_threadsafe(rerun, part)

    @staticmethod
    def targets(parts: dict[str, ClientState], bar_too: bool) -> list[tuple[str, float]]:
        """Which parts of a member's page to rerun, and after how long: the live part at
        once; the bar after it (if it shows something new), or at once if there is no live part."""
        if "live" not in parts:
            return [("bar", 0.0)] if "bar" in parts else []
        return [("live", 0.0)] + ([("bar", BAR_AFTER_S)] if bar_too and "bar" in parts else [])


@st.cache_resource(show_spinner=False)
def _pusher() -> _Pusher:
    return _Pusher(class_room())


def _watch_class(code: str | None, part: str = "bar", on: bool = True) -> None:
    """From inside a class part (a fragment): rerun it the moment ``code`` changes.

    ``code`` None: this tab is in no class; ``on`` False: not this part any more.
    """
    ctx = get_script_run_ctx()
    fragment_id = ThreadState.get().fragment_id  # the running fragment, as Streamlit 1.67 keeps it
    if ctx is None or not fragment_id or not Runtime.exists():
        return
    rerun = ClientState(query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
                        fragment_id=fragment_id, is_auto_rerun=True) if on else None
    _pusher().watch(ctx.session_id, code, part, rerun)


def teacher() -> Teacher | None:
    return st.session_state.get(TEACHER)


def seat() -> str:
    """This tab's seat: from the URL (a reconnect keeps it), else a new random one."""
    if SEAT not in st.session_state:
        st.session_state[SEAT] = (parse_seat(st.query_params.get_all(SEAT_KEY) or None)
                                  or classroom.new_seat())
    return st.session_state[SEAT]


def _say(error: ClassError) -> None:
    st.warning(str(error), icon=":material/cloud_off:" if isinstance(
        error, classroom.ClassUnavailable) else ":material/block:")


def _join(raw_code: object) -> bool:
    """Join as a student; a refusal's message is kept to show once."""
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


def leave() -> None:
    """Stop following the class: this tab works on its own again."""
    for name in (CODE, FOLLOWING, APPLIED):
        st.session_state.pop(name, None)
    st.query_params.pop(CLASS_KEY, None)
    st.query_params.pop(SEAT_KEY, None)


def student_code() -> str | None:
    """The class this tab follows; a join link (?class=CODE) joins it once."""
    if CODE not in st.session_state and teacher() is None:
        raw = st.query_params.get_all(CLASS_KEY)
        if raw and st.session_state.get("_class_link_tried") != raw:
            st.session_state["_class_link_tried"] = raw
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


# --------------------------------------------------------------------------- students

def follow_bar(page: str) -> None:
    """The class line at the top of a page: follow or break away, and the open question.

    ``page``: "playground", "lesson" or "classroom" (what following changes here).
    """
    code = student_code()
    if JOIN_MESSAGE in st.session_state:
        _say(st.session_state.pop(JOIN_MESSAGE))
    if (current := teacher()) is not None:
        st.caption(f":material/podium: You are teaching class **{show_class_code(current.code)}**: "
                   "students who follow see your Playground and lesson step.")
        return
    if code is None:
        return
    st.session_state[FULL_RUN] = True
    _student_fragment(page)


@st.fragment(run_every=POLL_S)
def _student_fragment(page: str) -> None:
    # Outside this fragment only whole-page runs set the flag: a fragment run that
    # takes new settings must rerun the page; a whole-page run takes them in time.
    full_run = st.session_state.pop(FULL_RUN, False)
    code = st.session_state.get(CODE)
    _watch_class(code)
    if code is None:
        return
    following = bool(st.session_state.get(FOLLOWING))
    if not following or page != "playground":
        _watch_class(code, "live", on=False)
    try:
        state = class_room().poll(code, seat(), following)
    except ClassError as error:
        _say(error)
        return
    if state is None:
        _watch_class(None)
        leave()
        st.info("The class has ended. Everything here keeps working on its own.",
                icon=":material/door_open:")
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if following:
        row.caption(f":material/group: Class **{show_class_code(code)}**: following the teacher.")
        row.button("Break away", key="class_break_away", icon=":material/explore:",
                   on_click=_set_following, args=(False,), help="Move the controls yourself; "
                   "the teacher's moves stop changing your page until you follow again.")
    else:
        row.caption(f":material/explore: Class **{show_class_code(code)}**: exploring on your own.")
        row.button("Follow the teacher", key="class_follow", icon=":material/group:",
                   type="primary", on_click=_set_following, args=(True,))
    rerun = following and _take(state, page) and not full_run
    _question_box(state, code)
    if rerun:
        _rerun_live_part(page)


def _rerun_live_part(page: str) -> None:
    """Show the teacher's new settings: rerun the Playground's live fragment, else the page.

    The Playground's live part is a fragment keyed PLAYGROUND_LIVE; rerunning only it
    skips the page frame (menu, presets), which a whole class pays for at the same
    moment on every move (bench/class_load.py). Streamlit 1.67 offers a keyed rerun
    only from a widget callback, and this runs from the poll's timer, so the request
    is queued the way ``st.rerun`` queues it: it starts once this fragment run ends.
    """
    ctx = get_script_run_ctx()
    if page != "playground" or ctx is None or ctx.script_requests is None:
        st.rerun(scope="app")
    try:
        fragments = ctx.fragment_storage.resolve_target(PLAYGROUND_LIVE)
    except StreamlitAPIException:
        st.rerun(scope="app")
    ctx.script_requests.request_rerun(RerunData(
        query_string=ctx.query_string, page_script_hash=ctx.page_script_hash,
        fragment_id_queue=fragments, is_fragment_scoped_rerun=True,
        cached_message_hashes=ctx.cached_message_hashes, context_info=ctx.context_info))


def _set_following(on: bool) -> None:
    st.session_state[FOLLOWING] = on
    st.session_state.pop(APPLIED, None)  # following again takes the teacher's settings now


def _take(state: ClassState, page: str) -> bool:
    """Take the teacher's settings and step -> whether this page must rerun to show them.

    Asked on every poll, and answered from what the page last drew, not from what
    was last taken: a rerun request that a busy server merged away is asked again.
    """
    applied = st.session_state.get(APPLIED)
    if applied is None or applied[0] != state.version:
        values = _control_values(*state.run_settings())
        _set_controls(values)
        # The teacher's settings win over the Playground's own link, read once per session.
        st.session_state["_url_checked:pages/playground.py"] = []  # see ui.url_messages
        st.session_state[APPLIED] = applied = (state.version, values)
    # Following, the lesson shows the teacher's step (as the controls hold the teacher's settings).
    st.session_state["lesson_step"] = state.step
    if page == "lesson" and st.query_params.get("step") != str(state.step):
        st.query_params["step"] = str(state.step)
    if page == "playground":
        return st.session_state.get(DRAWN) != applied[1]
    return page == "lesson" and st.session_state.get(DRAWN_STEP) != state.step


def run_controls() -> tuple[RunConfig, str]:
    """The Playground's controls (ui.run_controls), in class mode -> (RunConfig, graph view).

    A following student's controls hold the teacher's settings: a browser that
    has not drawn them yet still sends its old values with its next poll, and
    those must not undo the teacher's move (seen in bench/class_load.py). To
    move a control, a student breaks away. The teacher's moves go to the class.
    """
    code = st.session_state.get(CODE)
    if teacher() is None and st.session_state.get(FOLLOWING) and code is not None:
        # The server reruns this part the moment the teacher moves (_Pusher): take the
        # move here, in the same run, rather than in the class bar and then again here.
        _watch_class(code, "live")
        try:
            state = class_room().poll(code, seat(), True)
        except ClassError:
            state = None  # the class bar says so
        if state is not None:
            _take(state, "playground")
        if (applied := st.session_state.get(APPLIED)) is not None:
            _set_controls(applied[1])
    config, view = ui.run_controls()
    if (current := teacher()) is not None:
        values = _control_values(config, view)
        if st.session_state.get(PUBLISHED, {}).get("settings") != values:
            try:
                class_room().move(current, values)
            except ClassError as error:
                _say(error)
            else:
                st.session_state.setdefault(PUBLISHED, {})["settings"] = values
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


def _set_controls(values: dict[str, object]) -> None:
    """Put settings into the Playground's controls, before they are drawn."""
    for knob in RUN_KNOBS:
        # The seed is a float number box (ui.knob_widget); the rest take their value.
        value = values[knob.name]
        st.session_state[knob.name] = float(value) if ui.number_box(knob) else value
    st.session_state[VIEW.name] = values[VIEW.name]


def _question_box(state: ClassState, code: str) -> None:
    """The open question: an answer box, then, after the reveal, the live answer beside the guess."""
    if state.question is None:
        return
    step = state.question
    question = QUESTIONS[step]
    mine_key = f"class_answer:{code}:{step}"
    mine = st.session_state.get(mine_key)
    if mine is None:
        try:
            mine = class_room().my_answer(code, seat(), step)
        except ClassError:
            mine = None
        if mine is not None:
            st.session_state[mine_key] = mine
    with st.container(border=True):
        st.markdown(f"**Question {step}:** {lesson.STEPS[step - 1].question}")
        if state.revealed and state.answer:
            guess, live = st.columns(2)
            guess.metric("Your guess", mine if mine is not None else "none")
            live.metric(state.answer["label"], state.answer["value"])
            right = question.correct(state.answer["value"])
            if mine is not None and right is not None:
                st.markdown("Right!" if mine == right else f"The live run says **{right}**.")
            st.caption(state.answer["detail"])
        elif mine is not None:
            st.markdown(f"Your answer: **{mine}**. Wait for the teacher's reveal.")
        else:
            with st.form(f"class_answer_form_{step}", border=False, enter_to_submit=True):
                if question.kind == "number":
                    value = st.number_input(f"A whole number from {question.low} to {question.high}",
                                            min_value=question.low, max_value=question.high,
                                            value=None, step=1, key=f"class_number_{step}")
                else:
                    value = st.radio("Your answer", question.choices, index=None,
                                     key=f"class_choice_{step}", horizontal=True)
                sent = st.form_submit_button("Send my answer", type="primary")
            if sent:
                if value is None:
                    st.warning("Choose or type an answer first.", icon=":material/edit:")
                    return
                try:
                    st.session_state[mine_key] = class_room().answer(code, seat(), value)
                except ClassError as error:
                    _say(error)
                    return
                st.success(f"Answer sent: **{st.session_state[mine_key]}**.",
                           icon=":material/check:")


def join_box() -> None:
    """A student types the code from the teacher's screen."""
    with st.form("class_join", border=True, enter_to_submit=True):
        typed = st.text_input("Class code", max_chars=16, placeholder="K7QM-3XPA",
                              help="The code on the teacher's screen. Nothing about you is asked "
                                   "or stored.")
        if st.form_submit_button("Join the class", type="primary", icon=":material/login:"):
            if _join(typed):
                st.rerun()


# --------------------------------------------------------------------------- teacher

def start_box() -> None:
    """Start a class, or take one back with its key (after a reload)."""
    if st.button("Start a class", key="class_start", type="primary", icon=":material/podium:"):
        try:
            st.session_state[TEACHER] = class_room().start()
        except ClassError as error:
            _say(error)
            return
        leave()
        st.session_state.pop(PUBLISHED, None)
        st.rerun()
    with st.expander("Teach a class you started before (after a reload)"):
        with st.form("class_resume", border=False):
            code = st.text_input("Class code", max_chars=16, key="class_resume_code")
            key = st.text_input("Teacher key", type="password", max_chars=128,
                                key="class_resume_key")
            if st.form_submit_button("Teach this class"):
                parsed, message = parse_class_code(code)
                candidate = Teacher(parsed or "", key)
                try:
                    class_room().presence(candidate)  # refused unless the key is this class's
                except ClassError as error:
                    st.warning(message or str(error), icon=":material/block:")
                else:
                    st.session_state[TEACHER] = candidate
                    leave()
                    st.rerun()


def join_link(code: str) -> str:
    """What students open: the Playground, joined to the class. No key in it."""
    url = f"{ui.page_url('pages/playground.py')}?{urlencode({CLASS_KEY: code})}"
    here = st.context.url
    if not here:
        return url  # no browser (AppTest): a path relative to the app
    parts = urlsplit(here)
    return f"{parts.scheme}://{parts.netloc}{url}"


def teacher_console() -> None:
    """The Class page for the teacher: code, link and QR code, who follows, questions, end."""
    current = teacher()
    link = join_link(current.code)
    code_col, qr_col = st.columns([3, 2], vertical_alignment="center")
    with code_col:
        st.markdown("Class code")
        st.markdown(f"<p style='font-size:3.2rem;font-weight:700;letter-spacing:.12em;"
                    f"margin:0'>{show_class_code(current.code)}</p>", unsafe_allow_html=True)
        st.markdown("Join link (students open it, or type the code on the **Class** page):")
        st.code(link, language=None)
        _presence(current)
    with qr_col:
        qr = segno.make(link, error="m")
        st.image(qr.svg_inline(scale=6, dark=theme.TEXT), caption="Scan to join", width=260)
    st.divider()
    question_console(current, st.session_state.get("lesson_step", STEP.default), picker=True)
    st.divider()
    with st.expander("Teacher key: keep it private (it steers the class)"):
        st.caption("With the code, it lets you teach this class again after a reload. "
                   "Never put it on the projector or in a link.")
        st.code(current.key, language=None)
    with st.popover("End the class", icon=":material/logout:"):
        st.markdown("Every student's page goes back to working on its own, and the class's "
                    "answers are deleted.")
        if st.button("End it now", key="class_end", type="primary"):
            try:
                class_room().end(current)
            except ClassError as error:
                _say(error)
            st.session_state.pop(TEACHER, None)
            st.session_state.pop(PUBLISHED, None)
            st.rerun()


@st.fragment(run_every=TEACHER_REFRESH_S)
def _presence(current: Teacher) -> None:
    try:
        connected, following = class_room().presence(current)
    except ClassError as error:
        _say(error)
        return
    st.markdown(f":material/group: **{connected}** connected · **{following}** following")


def question_console(current: Teacher, step: int, picker: bool = False) -> None:
    """Open a lesson step's question, watch the answers come in, reveal the live answer."""
    if picker:
        step = st.selectbox("Lesson question", list(QUESTIONS), index=step - 1,
                            key="class_question_step",
                            format_func=lambda n: f"{n}. {lesson.STEPS[n - 1].question.replace('`', '')}")
    else:
        st.markdown(f"**Class answers to question {step}**")
    row = st.container(horizontal=True)
    if row.button("Open answers", key="class_open", icon=":material/how_to_vote:"):
        try:
            class_room().open_question(current, step)
        except ClassError as error:
            _say(error)
    if row.button("Reveal the live answer", key="class_reveal", icon=":material/visibility:",
                  type="primary"):
        with st.spinner("Running it live…"):
            answer = ui.cached_answer(step)
        try:
            class_room().reveal(current, answer.label, answer.value, answer.detail)
            st.session_state.setdefault("lesson_revealed", set()).add(step)
        except ClassError as error:
            _say(error)
    _distribution(current, step)


@st.fragment(run_every=TEACHER_REFRESH_S)
def _distribution(current: Teacher, step: int) -> None:
    room = class_room()
    try:
        state = room.poll(current.code, None, False)
        counts = room.distribution(current, step)
    except ClassError as error:
        _say(error)
        return
    if state is None:
        st.info("This class has ended.")
        return
    is_open = state.question == step
    status = ("open: students are answering" if is_open and not state.revealed
              else "revealed" if is_open else "not open")
    total = sum(counts.values())
    st.markdown(f"Question {step} is **{status}**. **{total}** answer{'s' if total != 1 else ''}.")
    right = None
    if is_open and state.revealed and state.answer:
        right = QUESTIONS[step].correct(state.answer["value"])
        st.markdown(f"Live answer: **{state.answer['value']}** ({state.answer['label']})")
    if total:
        st.plotly_chart(distribution_figure(step, counts, right), width="stretch",
                        key=f"class_distribution_{step}",
                        config={"displayModeBar": False},
                        alt=f"Bar chart of the class's answers to question {step}: "
                            + ", ".join(f"{v}: {n}" for v, n in counts.items()))


def distribution_figure(step: int, counts: dict[str, int], right: str | None) -> go.Figure:
    """Bars of how many students gave each answer; the live answer in green once revealed."""
    question = QUESTIONS[step]
    if question.kind == "choice":
        values = [c for c in question.choices]
    else:
        values = sorted(counts, key=int)
    heights = [counts.get(v, 0) for v in values]
    colours = [theme.GREEN if v == right else theme.BLUE for v in values]
    fig = go.Figure(go.Bar(x=[str(v) for v in values], y=heights, marker_color=colours,
                           text=heights, textposition="outside"))
    fig.update_layout(height=320, margin=dict(l=40, r=10, t=10, b=40),
                      font=dict(family=theme.FONT_FAMILY, size=theme.FONT_SIZE, color=theme.TEXT),
                      xaxis=dict(type="category", title="answer"),
                      yaxis=dict(title="students", rangemode="tozero", dtick=1 if max(heights) < 10
                                 else None),
                      plot_bgcolor="white", showlegend=False)
    return fig


def lesson_hook(step: int) -> None:
    """Called by the Lesson page under the question: the teacher's step goes to the class,
    and the teacher gets the answers console for it."""
    st.session_state[DRAWN_STEP] = step
    current = teacher()
    if current is None:
        return
    if st.session_state.get(PUBLISHED, {}).get("step") != step:
        try:
            class_room().go_to_step(current, step)
        except ClassError as error:
            _say(error)
            return
        st.session_state.setdefault(PUBLISHED, {})["step"] = step
    with st.container(border=True):
        question_console(current, step)
