"""Starting a class: with a lesson (ours, one we ship, or the teacher's own file or link), or
taking one back with its key after a reload.

A lesson of the teacher's own is untrusted text, parsed here (``lessons.parse_lesson``: a
refusal names the line and the key) and kept with the class in its store; students read it
from there, never from a link. The authoring page hands the lesson written on it here
(``keys.LESSON_TO_TEACH``).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import streamlit as st

from stockdemo.authoring import read_lesson
from stockdemo.classroom import ClassError, Teacher
from stockdemo.config import LESSON, parse_class_code
from stockdemo.i18n import N_, Message, later, tr, trn
from stockdemo.lessons import Lesson, lesson_from_link, shipped, shipped_lesson
from stockdemo.ui.classmode.keys import OWN_LESSON, OWN_REFUSED, PUBLISHED, START_LESSON, TEACHER
from stockdemo.ui.classmode.session import class_room, leave, say
from stockdemo.ui.keys import LESSON_TO_TEACH

OWN = "own"  # the picker's choice for a lesson of the teacher's own
REFUSED = N_("This lesson was refused: {error}.")
UNREADABLE = N_("This link holds no lesson that can be read: it may have been cut short or changed.")


def start_box() -> None:
    """Pick the lesson, start a class with it; or take one back with its key (after a reload)."""
    lesson = lesson_picker()
    if st.button(tr("Start a class"), key="class_start", type="primary", icon=":material/podium:",
                 disabled=lesson is None, help=tr("Students who join follow this lesson's steps.")):
        try:
            _teach(class_room().start(lesson))
        except ClassError as error:
            say(error)
            return
        st.rerun()
    with st.expander(tr("Teach a class you started before (after a reload)")):
        with st.form("class_resume", border=False):
            code = st.text_input(tr("Class code"), max_chars=16, key="class_resume_code")
            key = st.text_input(tr("Teacher key"), type="password", max_chars=128,
                                key="class_resume_key")
            if st.form_submit_button(tr("Teach this class")):
                parsed, message = parse_class_code(code)
                candidate = Teacher(parsed or "", key)
                try:
                    class_room().presence(candidate)  # refused unless the key is this class's
                except ClassError as error:
                    st.warning(tr(message) if message else str(error), icon=":material/block:")
                else:
                    _teach(candidate)
                    st.rerun()


def _teach(current: Teacher) -> None:
    st.session_state[TEACHER] = current
    leave()
    st.session_state.pop(PUBLISHED, None)


def lesson_picker() -> Lesson | None:
    """The lesson the class will follow: one we ship, or the teacher's own (a file, a link, or
    the one written on the authoring page) -> it, or None while the teacher's own is missing."""
    if (handed := st.session_state.pop(LESSON_TO_TEACH, None)) is not None:
        _own(handed)  # from the authoring page
    names = shipped()
    own = st.session_state.get(OWN_LESSON)
    choices = [*names, OWN]
    st.session_state.setdefault(START_LESSON, names[0])  # ours, until another is picked or handed
    picked = st.selectbox(
        tr("Lesson"), choices, key=START_LESSON, format_func=lambda name: _title(name, own),
        help=tr("The steps the class follows on the Lesson page, with their questions and challenges."))
    if picked != OWN:
        return shipped_lesson(picked)
    st.file_uploader(tr("A lesson file (TOML): docs/lesson.md says how to write one"), type=["toml"],
                     key="class_lesson_upload", on_change=_take_upload)
    st.text_input(tr("Or a lesson's link"), key="class_lesson_link", on_change=_take_link,
                  placeholder="https://…/lesson?lesson=…")
    if (refused := st.session_state.get(OWN_REFUSED)) is not None:
        st.error(str(refused), icon=":material/error:")
    elif own is not None:
        st.caption(tr("{title}: {steps}, {challenges}.", title=own.title,
                      steps=trn("{n} step", "{n} steps", len(own.steps)),
                      challenges=trn("{n} challenge", "{n} challenges", len(own.challenges()))))
    return own


def _title(name: str, own: Lesson | None) -> str:
    if name != OWN:
        return tr(shipped_lesson(name).title)
    if own is None:
        return tr("Your own lesson: a file or a link")
    return tr("Your own: {title}", title=own.title)


def _own(lesson: Lesson) -> None:
    """A lesson of the teacher's own (a file, a link, the authoring page) is the one the next
    class follows."""
    st.session_state[OWN_LESSON] = lesson
    st.session_state[START_LESSON] = OWN
    st.session_state.pop(OWN_REFUSED, None)


def _take_upload() -> None:
    upload = st.session_state.get("class_lesson_upload")
    if upload is not None:
        _read(upload.getvalue())


def _take_link() -> None:
    """A lesson's link pasted: one we ship by its name, or a lesson packed in it."""
    value = link_value((st.session_state.get("class_lesson_link") or "").strip())
    if not value:
        return
    if value in shipped():
        _own(shipped_lesson(value))
        return
    text, _ = lesson_from_link(value)
    if text is None:
        _take(None, later(UNREADABLE))
    else:
        _read(text)


def _read(text: str | bytes) -> None:
    lesson, refused = read_lesson(text)
    _take(lesson, None if refused is None else later(REFUSED, error=refused))


def link_value(raw: str) -> str:
    """A pasted link's ``?lesson=`` value (the whole text when it is not a link with one)."""
    found = parse_qs(urlsplit(raw).query).get(LESSON.name)
    return found[-1] if found else raw


def _take(lesson: Lesson | None, refusal: Message | None) -> None:
    """A teacher's lesson read, or why it was refused (said under the picker)."""
    if lesson is None:
        st.session_state[OWN_REFUSED] = refusal
        st.session_state.pop(OWN_LESSON, None)
    else:
        _own(lesson)
