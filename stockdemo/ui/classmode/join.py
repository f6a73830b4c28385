"""Joining a class as a student: by the code typed in, or by a join link (``?class=CODE``)."""

from __future__ import annotations

import streamlit as st

from stockdemo.classroom import ClassError
from stockdemo.config import CLASS_KEY, SEAT_KEY
from stockdemo.i18n import tr
from stockdemo.ui.classmode.keys import APPLIED, CODE, FOLLOWING, JOIN_MESSAGE, LINK_TRIED
from stockdemo.ui.classmode.session import class_room, say, seat, teacher


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


def intro(intros: tuple[str, str]) -> str | None:
    """A page's intro in a class (``hooks.PAGE_INTRO``): the teacher's or a student's; else None."""
    current = role()
    return None if current is None else intros[current == "student"]


def role() -> str | None:
    """This tab in a class: "teacher", "student" (following or exploring), or None."""
    if teacher() is not None:
        return "teacher"
    return "student" if student_code() is not None else None


def join_box() -> None:
    """A student types the code from the teacher's screen; a refusal shows under it, at once."""
    with st.form("class_join", border=True, enter_to_submit=True):
        typed = st.text_input(tr("Class code"), max_chars=16, placeholder="K7QM-3XPA",
                              key="class_join_code",
                              help=tr("The code on the teacher's screen. Nothing about you is asked "
                                      "or stored."))
        if st.form_submit_button(tr("Join the class"), type="primary", icon=":material/login:"):
            if _join(typed):
                st.rerun()
            say(st.session_state.pop(JOIN_MESSAGE))
