"""The Lesson's lesson and step: on screen and in the URL, its answer revealed, its question as asked.

The lesson is a class's (a listener of ``hooks.LESSON_SHOWN``), a link's (``?lesson=``: a
shipped lesson's name, or a lesson packed by ``stockdemo.lessons.lesson_to_link``), else ours.
In a class the question is the class's (asked once, answered, revealed by the teacher):
a listener of ``hooks.LESSON_QUESTION`` draws it and says what the step may show.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from stockdemo.config import LESSON, STEP
from stockdemo.i18n import tr
from stockdemo.lessons import (
    Lesson,
    LessonError,
    builtin_lesson,
    lesson_to_link,
    open_lesson,
    parse_lesson,
    shipped,
    shipped_lesson,
)
from stockdemo.lessons.said import said
from stockdemo.ui import hooks, keys


@dataclass(frozen=True)
class InClass:
    """What a Lesson step may show in a class, besides the question the class parts drew."""

    revealed: bool  # the class has seen the live answer: its graph may be drawn
    may_explore: bool  # the step's link to its experiment (which computes the answer)


def shown_lesson() -> Lesson:
    """The lesson this run shows: a class's, else the link's (a refused one is said), else an
    uploaded one too long for a link, else ours. Another lesson than the last starts afresh."""
    lesson = hooks.ask(hooks.LESSON_SHOWN) or _linked() or st.session_state.get(keys.LESSON_UPLOADED) \
        or builtin_lesson()
    if st.session_state.get(keys.LESSON_DIGEST) != lesson.digest:
        st.session_state[keys.LESSON_DIGEST] = lesson.digest
        st.session_state.pop(keys.LESSON_REVEALED, None)
    return lesson


def _linked() -> Lesson | None:
    raw = st.query_params.get(LESSON.name)
    if not raw:
        return None
    lesson, message = open_lesson(raw)
    if lesson is None:
        st.warning(message, icon=":material/link_off:")
    return lesson


def lesson_picker(shown: Lesson) -> None:
    """Open another lesson: one we ship, or a teacher's file (kept in the link when it fits)."""
    with st.expander(tr("Open another lesson"), icon=":material/menu_book:"):
        names = shipped()
        index = names.index(shown.id) if shown.id in names else None
        st.selectbox(tr("A lesson of ours"), names, index=index,
                     format_func=lambda n: said(shipped_lesson(n).title), key=keys.LESSON_PICKER,
                     on_change=_open_picked, placeholder=tr("Pick a lesson"))
        st.file_uploader(tr("Or a lesson file (TOML): `docs/lesson.md` says how to write one"), type=["toml"],
                         key=keys.LESSON_UPLOAD, on_change=_open_uploaded)
        if (refused := st.session_state.get(keys.LESSON_REFUSED)) is not None:
            st.error(tr("This lesson file was refused: {error}.", error=refused.said()),
                     icon=":material/error:")


def _open(query: dict[str, str]) -> None:
    st.query_params.update({**query, STEP.name: "1"})
    keep_step(1)


def _open_picked() -> None:
    name = st.session_state.get(keys.LESSON_PICKER)
    if name:
        st.session_state.pop(keys.LESSON_UPLOADED, None)
        _open({LESSON.name: name})


def _open_uploaded() -> None:
    """A teacher's file, parsed (untrusted, like any lesson): into the link when it fits, else
    kept for this tab; a refused file is said with its line and key."""
    upload = st.session_state.get(keys.LESSON_UPLOAD)
    st.session_state.pop(keys.LESSON_REFUSED, None)
    if upload is None:
        return
    try:
        lesson = parse_lesson(upload.getvalue())
    except LessonError as err:
        st.session_state[keys.LESSON_REFUSED] = err  # said where shown, in the reader's language
        return
    link = lesson_to_link(lesson.text)
    if link is None:
        st.session_state[keys.LESSON_UPLOADED] = lesson
        st.query_params.pop(LESSON.name, None)
        _open({})
    else:
        _open({LESSON.name: link})


def current_step() -> int:
    """The step the Lesson shows in this run: the link's, else the one kept in the session."""
    return STEP.parse(st.query_params.get_all(STEP.name) or st.session_state.get(keys.LESSON_STEP))[0]


def lesson_step() -> int:
    """The lesson step on screen, kept in the URL (``?step=3``) so a link or a reload opens it.

    Back from an experiment through the menu (no ``?step``), the class resumes where it left.
    """
    raw = st.query_params.get_all(STEP.name) or st.session_state.get(keys.LESSON_STEP)
    number, message = STEP.parse(raw)
    if message:
        st.warning(message, icon=":material/link_off:")
    show_step(number)
    return number


def show_step(number: int) -> None:
    """Put the Lesson on step ``number``: kept in the session and in the URL."""
    keep_step(number)
    if st.query_params.get(STEP.name) != str(number):
        st.query_params[STEP.name] = str(number)


def kept_step() -> int | None:
    """The step this session last showed, or None."""
    return st.session_state.get(keys.LESSON_STEP)


def keep_step(number: int) -> None:
    """The step the Lesson opens at next, when its link names none (the teacher's console)."""
    st.session_state[keys.LESSON_STEP] = number


def go_to_step(number: int) -> None:
    st.query_params[STEP.name] = str(number)


def reveal_step(number: int) -> None:
    """This tab has revealed the answer of step ``number``."""
    st.session_state.setdefault(keys.LESSON_REVEALED, set()).add(number)


def step_revealed(number: int) -> bool:
    return number in st.session_state.get(keys.LESSON_REVEALED, set())


def lesson_question(number: int) -> InClass | None:
    """A step's question as a listener asked it (a class's); None: the page asks it itself."""
    return hooks.ask(hooks.LESSON_QUESTION, number)


def lesson_challenge(challenge: str, source: str) -> None:
    """A step with a challenge: a listener may offer to ask it of a class (class mode: its
    teacher's "Ask the class" button, which opens Your code with the challenge open)."""
    hooks.ask(hooks.LESSON_CHALLENGE, challenge, source)


def lesson_drawn() -> None:
    """Last in the Lesson's live part: the step is drawn, all of it (``hooks.LESSON_DRAWN``).

    Said at the end: a run stopped half-way by another rerun request has not drawn it.
    """
    hooks.fire(hooks.LESSON_DRAWN)
