"""The authoring page's parts: a lesson file in the editor, and its live preview.

The text lives in the session (``keys.AUTHOR_TEXT``); it starts from a link's ``?lesson=``, a
lesson we ship, or an uploaded file. Ctrl+Enter (or Preview) parses it (``lessons.parse_lesson``:
a refusal names the line, marked in the editor, and the key) and shows each step's answer
computed live and each challenge's check tried on its reference answer and its starting code
(``stockdemo.authoring``). Every run goes through the sandbox as this session's
(``code_run.session_runner``). The lesson leaves as a file, as a link, or to the Class page
(``keys.LESSON_TO_TEACH``), where a class starts with it.
"""

from __future__ import annotations

import streamlit as st

from stockdemo.authoring import Trial, read_lesson, try_challenge
from stockdemo.config import LESSON
from stockdemo.i18n import tr, trn
from stockdemo.lessons import (
    Lesson,
    LessonError,
    Step,
    builtin_lesson,
    lesson_to_link,
    open_lesson,
    shipped,
    shipped_lesson,
)
from stockdemo.lessons.code_answers import runs_for
from stockdemo.lessons.said import said
from stockdemo.ui import compat, keys
from stockdemo.ui.caches import cached_answer
from stockdemo.ui.code_editor import code_editor
from stockdemo.ui.code_run import session_runner
from stockdemo.ui.routes import ROOT, absolute, page_url

CLASS_PAGE = "pages/classroom.py"
LESSON_PAGE = "pages/lesson.py"


def draft() -> tuple[str, Lesson | None, LessonError | None]:
    """The text in the editor (a link's lesson the first time, else ours), and what it parses
    to: (text, the lesson, None) or (text, None, why it was refused)."""
    if keys.AUTHOR_TEXT not in st.session_state:
        linked, message = open_lesson(st.query_params.get(LESSON.name)) \
            if st.query_params.get(LESSON.name) else (None, None)
        if message:
            st.warning(message, icon=":material/link_off:")
        _show((linked or builtin_lesson()).text)
    text = st.session_state[keys.AUTHOR_TEXT]
    lesson, refused = read_lesson(text)
    return text, lesson, refused


def _show(text: str) -> None:
    """Put ``text`` in the editor (the browser replaces its own)."""
    st.session_state[keys.AUTHOR_TEXT] = text
    st.session_state[keys.AUTHOR_DOC] = st.session_state.get(keys.AUTHOR_DOC, 0) + 1


def sources() -> None:
    """Start from a lesson we ship, or from a file: either replaces the editor's text."""
    row = st.container(horizontal=True, vertical_alignment="bottom")
    names = shipped()
    row.pills(tr("Start from a lesson of ours"), names, key=keys.AUTHOR_PICK, selection_mode="single",
              format_func=lambda name: said(shipped_lesson(name).title), on_change=_pick)
    row.file_uploader(tr("Or open a lesson file (TOML)"), type=["toml"], key=keys.AUTHOR_UPLOAD,
                      on_change=_upload)


def _pick() -> None:
    name = st.session_state.get(keys.AUTHOR_PICK)
    if name:
        _show(shipped_lesson(name).text)
    st.session_state[keys.AUTHOR_PICK] = None  # a pill is a button: the same lesson again is a click


def _upload() -> None:
    upload = st.session_state.get(keys.AUTHOR_UPLOAD)
    if upload is not None:
        # Shown as sent (refused or not: the preview says why, at its line); decoded leniently,
        # so a file that is not UTF-8 is still text to fix.
        _show(upload.getvalue().decode("utf-8", errors="replace"))


def _take(text: str, n: int) -> None:
    """Preview pressed: this text is the lesson now."""
    st.session_state[keys.AUTHOR_TEXT] = text
    st.session_state[keys.AUTHOR_RAN] = n


def editor(text: str, lesson: Lesson | None, refused: LessonError | None) -> None:
    """The lesson's text in the editor (TOML), its refusal marked on its line."""
    mark = None if refused is None else {"line": refused.line, "message": refused.said()}
    status = (tr("Refused on line {line}.", line=refused.line) if refused is not None and refused.line
              else tr("Refused.") if refused is not None
              else trn("Read: {n} step.", "Read: {n} steps.", len(lesson.steps)))
    code_editor(text, str(st.session_state.get(keys.AUTHOR_DOC, 0)), _take, key="lesson_editor",
                error=mark, status=status, ran=st.session_state.get(keys.AUTHOR_RAN, 0),
                language="toml")


def refusal(refused: LessonError) -> None:
    """Why the text is not a lesson, at its line and key."""
    st.error(refused.said(), icon=":material/error:")


def exports(lesson: Lesson) -> None:
    """The lesson as a file, as a link (opening the Lesson page on it), and to a class."""
    row = st.container(horizontal=True, vertical_alignment="center")
    row.download_button(tr("Download the lesson"), lesson.text, file_name=f"{lesson.id}.toml",
                        mime="application/toml", icon=":material/download:", on_click="ignore")
    if row.button(tr("Teach it to a class"), icon=":material/podium:", key="author_teach",
                  help=tr("The Class page, with this lesson picked for the class you start.")):
        st.session_state[keys.LESSON_TO_TEACH] = lesson
        st.switch_page(str(ROOT / CLASS_PAGE))
    link = lesson_to_link(lesson.text)
    if link is None:
        st.caption(tr("This lesson is too long for a link: download it, and open the file on the "
                      "Lesson or Class page."))
    else:
        # One line, scrolled sideways, with its copy button: the link is long.
        st.caption(tr("Its link opens it on the Lesson page:"))
        st.code(absolute(f"{page_url(LESSON_PAGE)}?{LESSON.name}={link}"), language=None, wrap_lines=False)


def preview(lesson: Lesson) -> None:
    """Each step as the class will see it, its answer computed live, its challenge tried."""
    st.subheader(said(lesson.title), anchor=False)
    if lesson.about:
        st.markdown(said(lesson.about))
    for number, step in enumerate(lesson.steps, 1):
        with st.container(border=True, key=f"author_step_{number}"):
            step_preview(number, step)


def step_preview(number: int, step: Step) -> None:
    """One step: its title and question, the live answer, and its challenge's trial."""
    st.markdown(f"**{number}. {said(step.title)}**")
    st.markdown(f":material/help: {said(step.question)}")
    with st.spinner(tr("Running it live…")), runs_for(compat.session_id()):
        answer = cached_answer(step).said()
    # One above the other: beside its sentence, a figure in Spanish ("hasta 0,159") was cut off.
    st.metric(answer.label, answer.value)
    st.markdown(answer.detail)
    if step.challenge is not None:
        with st.spinner(tr("Trying the challenge's check…")):
            trial_lines(try_challenge(step.challenge, session_runner))


def trial_lines(trial: Trial) -> None:
    """A challenge's check on its two programs: passes or not, each, and what to fix."""
    st.markdown(":material/assignment: " + tr("**Challenge: {title}**", title=said(trial.challenge.title)))
    if trial.reference is not None:
        st.markdown(tr("The reference answer passes the check.")
                    if trial.reference.passes else tr("The reference answer fails the check."))
    st.markdown(tr("The starting code passes the check.") if trial.start.passes
                else tr("The starting code fails the check, as it should."))
    for warning in trial.warnings:
        st.warning(said(warning), icon=":material/warning:")
