"""What a browser tab holds in class mode, and what its knobs tell the class.

State per tab (``st.session_state``, ``classmode/keys.py``): the teacher's ``Teacher``
(code and secret key), or a student's class code, seat token, whether they follow, and
the class version they last took. Class state itself lives in ``stockdemo.classroom``
(memory or Redis), never here.

Every knob widget announces itself (``hooks.KNOB_DRAWN``: the teacher's values go to
the class) and a move by hand (``hooks.KNOB_MOVED``: a following student's move snaps
back, with a hint); ``classmode.register`` listens with the functions here.
"""

from __future__ import annotations

import os
import time

import streamlit as st

from stockdemo import classroom, lab
from stockdemo.classroom import ClassError, Classroom, Teacher, followed_knobs, page_params
from stockdemo.config import (
    CLASS_KEY,
    PANEL,
    RUN_KNOBS,
    SEAT_KEY,
    STEP,
    VIEW,
    ChoiceKnob,
    IntKnob,
    parse_seat,
)
from stockdemo.i18n import N_, tr
from stockdemo.lessons import Lesson, builtin_lesson
from stockdemo.ui import steps, url_sync
from stockdemo.ui.classmode.keys import (
    APPLIED,
    APPLIED_AT,
    CODE,
    FOLLOWING,
    HERE,
    LESSON_OF,
    PUBLISHED,
    SEAT,
    TEACHER,
)

HINT = N_("You are following the teacher. Break away to explore.")
# A browser that has not drawn the teacher's move yet still sends the old value with
# its next message; seen as a change, it would look like a move by the student.
STALE_S = 1.5


@st.cache_resource(show_spinner=False)
def class_room() -> Classroom:
    """One per server process: in memory, or Redis when STOCKDEMO_REDIS_URL is set."""
    return classroom.open_classroom(os.environ.get("STOCKDEMO_REDIS_URL"))


def teacher() -> Teacher | None:
    return st.session_state.get(TEACHER)


def seat() -> str:
    """This tab's seat: from the URL (a reload, or a reconnect, keeps it), else a new random one."""
    if SEAT not in st.session_state:
        st.session_state[SEAT] = (parse_seat(st.query_params.get_all(SEAT_KEY) or None)
                                  or classroom.new_seat())
    return st.session_state[SEAT]


def class_lesson() -> Lesson | None:
    """The lesson this tab's class teaches, for its teacher or a student; None outside a class.

    Read from the class store (a student's tab never holds it in a link: it has the
    challenges' answers), parsed once per server process. Ours while the store cannot say.
    """
    current = teacher()
    code = current.code if current is not None else st.session_state.get(CODE)
    if code is None:
        return None
    kept = st.session_state.get(LESSON_OF)
    try:
        if kept is None or kept[0] != code:
            state = class_room().poll(code, None, False)
            if state is None:
                return None
            kept = st.session_state[LESSON_OF] = (code, state.lesson)
        return class_room().lesson(code, kept[1])
    except ClassError:
        return builtin_lesson()


def in_class() -> bool | None:
    """True when this tab is a class's teacher or one of its students, else None (``hooks.IN_CLASS``)."""
    return True if teacher() is not None or st.session_state.get(CODE) is not None else None


def following() -> bool:
    """This tab is a student's that follows the teacher."""
    return (teacher() is None and st.session_state.get(CODE) is not None
            and bool(st.session_state.get(FOLLOWING)))


def say(error: ClassError) -> None:
    st.warning(str(error), icon=":material/cloud_off:" if isinstance(
        error, classroom.ClassUnavailable) else ":material/block:")


def leave() -> None:
    """Stop following the class: this tab works on its own again."""
    for name in (CODE, FOLLOWING, APPLIED):
        st.session_state.pop(name, None)
    st.query_params.pop(CLASS_KEY, None)
    st.query_params.pop(SEAT_KEY, None)


# --------------------------------------------------------------------------- a page's settings

def widget_value(knob, value: object) -> object:
    """A knob's value as its widget holds it in session_state."""
    if knob is PANEL:
        return PANEL.show(str(value))  # tabs are bound by their title
    return url_sync.widget_value(knob, value)


def _from_widget(knob, value: object) -> object:
    if knob is PANEL:
        return PANEL.parse(value)[0]
    if isinstance(knob, IntKnob) and isinstance(value, float):
        return int(value)
    return value


def current_params(page: str, arrived: bool) -> dict[str, str]:
    """What this tab's ``page`` shows, as class settings (page_params), read before its widgets.

    ``arrived``: this run opened the page, so its link decides (a bound widget takes the
    URL's value on arrival); otherwise the widgets' values of the last run do.
    """
    raw: dict[str, object] = {}
    for knob in followed_knobs(page):
        in_url = st.query_params.get_all(knob.name)
        if knob is STEP:
            raw[knob.name] = in_url or steps.kept_step()
        elif knob.name in st.session_state and not (arrived and in_url):
            raw[knob.name] = _from_widget(knob, st.session_state[knob.name])
        elif in_url:
            raw[knob.name] = in_url
    return page_params(page, raw)


def publish(page: str, params: dict[str, str]) -> None:
    """The teacher's page and settings to the class, when they changed. Teacher only."""
    current = teacher()
    if current is None or st.session_state.get(PUBLISHED) == (page, params):
        return
    try:
        class_room().go_to(current, page, params)
    except ClassError as error:
        say(error)
    else:
        st.session_state[PUBLISHED] = (page, params)


def knob_drawn(knob: IntKnob | ChoiceKnob, value: object) -> None:
    """A knob widget's value as drawn: a teacher's new value goes to the class at once."""
    if TEACHER not in st.session_state or HERE not in st.session_state:
        return
    page = st.session_state[HERE]
    if knob not in followed_knobs(page):
        return
    published = st.session_state.get(PUBLISHED)
    params = dict(published[1]) if published and published[0] == page else {}
    params[knob.name] = str(value)
    publish(page, page_params(page, params))


def teachers_value(knob) -> object | None:
    """What the teacher's settings hold for a knob, for a following student; None otherwise."""
    applied = st.session_state.get(APPLIED)
    if applied is None or not following() or knob not in followed_knobs(applied[1]):
        return None
    value, _ = knob.parse(applied[2].get(knob.name))
    return widget_value(knob, value)


def knob_moved(name: str) -> None:
    """A knob moved by hand (its on_change): a following student's move snaps back, with a hint."""
    if not following():
        return
    knob = next((k for k in (*RUN_KNOBS, VIEW, *followed_knobs(st.session_state.get(HERE, "")))
                 if k.name == name), None)
    value = None if knob is None else teachers_value(knob)
    if value is None or st.session_state.get(name) == value:
        return
    st.session_state[name] = value
    if time.monotonic() - st.session_state.get(APPLIED_AT, 0.0) > STALE_S:
        st.toast(tr(HINT), icon=":material/group:")


def lab_tab_ok(title: str) -> bool:
    """A Lab experiment's title, as its tabs show it."""
    return title in lab.EXPERIMENTS
