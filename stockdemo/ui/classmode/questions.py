"""A lesson question in class, for a student: asked once, answered before the reveal, then
the live answer beside the guess. Nothing of the answer reaches a student's browser before."""

from __future__ import annotations

import time

import streamlit as st
from streamlit.errors import StreamlitAPIException

from stockdemo import classroom
from stockdemo.classroom import ClassError, ClassState, live_value, revealed_words
from stockdemo.i18n import tr
from stockdemo.lessons import Question, Step, builtin_lesson
from stockdemo.ui.classmode import question_console
from stockdemo.ui.classmode.keys import BOX, CODE, DRAWN_AT, DRAWN_BOX, STATE, answer_key, pending_key
from stockdemo.ui.classmode.session import class_lesson, class_room, say, seat, teacher
from stockdemo.ui.steps import InClass


def _state() -> ClassState | None:
    """The class as the bar saw it this run, else as it is now, else as last seen (Redis down)."""
    seen = st.session_state.get(STATE)
    if seen is not None and time.monotonic() - seen[0] < 0.5:
        return seen[1]
    try:
        return class_room().poll(st.session_state[CODE], None, False)
    except ClassError:
        return None if seen is None else seen[1]


def box_key(state: ClassState) -> tuple:
    return state.question, state.revealed, state.locked()


def lesson_question(number: int) -> InClass | None:
    """A Lesson step's question as the class runs it; None outside a class (the page asks it).

    The teacher gets the question with the answers console; a student the question once,
    with their answer box, and never the reveal, the answer or the experiment before the
    teacher reveals it (none of them is sent to the browser).
    """
    if teacher() is not None:
        return InClass(question_console.lesson_console(number), may_explore=True)
    code = st.session_state.get(CODE)
    if code is None:
        return None
    state = _state()
    if state is None:  # in a class whose server does not answer: still the teacher's to reveal
        st.subheader(f":material/help: {tr(_step(number).question)}", anchor=False)
        return InClass(revealed=False, may_explore=False)
    st.session_state[BOX] = box_key(state)
    revealed = question_box(state, code, number, in_bar=False)
    return InClass(revealed, may_explore=revealed)


def lesson_drawn() -> None:
    """Last thing in the Lesson's live part: the class's question box on it is drawn, all of it.

    Said at the end (as ``follow.drawn`` on the Playground): a run stopped half-way by
    another rerun request must leave the class bar asking for it again.
    """
    if BOX in st.session_state:
        st.session_state[DRAWN_BOX] = st.session_state.pop(BOX)
        st.session_state[DRAWN_AT] = time.monotonic()


def _step(number: int) -> Step:
    """Step ``number`` of the class's lesson."""
    steps = (class_lesson() or builtin_lesson()).steps
    return steps[min(number, len(steps)) - 1]


def _mine(code: str, step: int, is_open: bool) -> str | None:
    """This seat's answer: kept in the tab as sent, checked against the class store.

    An answer the store does not hold while the question is still open is sent
    again: one given while Redis was down, or one Redis lost when it restarted
    before writing it to disk. The tab remembers what was sent.
    """
    key, pending = answer_key(code, step), pending_key(code, step)
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


def question_box(state: ClassState, code: str, step: int | None, in_bar: bool) -> bool:
    """A lesson question for a student -> whether its live answer is out.

    Open: the answer box (or the answer given), with the countdown. Revealed: the
    live answer beside the guess. In the bar, only the open question is shown.
    """
    if step is None:
        return False
    asked = _step(step)
    question = asked.ask
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
        st.markdown(tr("**Question {step}:** {question}", step=step, question=tr(asked.question)))
        if revealed and live:
            _revealed(question, live, mine)
        elif not current:
            st.markdown(tr("The teacher opens this question for the class: answer it then."))
        elif mine is not None and st.session_state.get(pending_key(code, step)):
            st.warning(tr("Your answer **{answer}** is kept here: it is sent as soon as the class "
                          "server answers again.", answer=tr(mine)), icon=":material/cloud_upload:")
        elif mine is not None:
            st.success(tr("Your answer: **{answer}**. Wait for the teacher's reveal.", answer=tr(mine)),
                       icon=":material/check:")
            _countdown(state)
        elif state.locked():
            st.markdown(tr("Time is up: answers are locked. Wait for the teacher's reveal."))
        else:
            _countdown(state)
            _answer_form(code, step)
    return revealed


def _revealed(question: Question, live: dict, mine: str | None) -> None:
    """The live answer beside the student's guess, in the student's language."""
    label, value, detail = revealed_words(live)
    guess, answer = st.columns(2)
    guess.metric(tr("Your guess"), tr(mine) if mine is not None else tr("none"))
    answer.metric(label, value)
    right = question.correct(live_value(live))
    if mine is not None and right is not None:
        if question.is_right(mine, right):
            st.success(tr("Right!"), icon=":material/check_circle:")
        else:
            st.info(tr("The live run says **{right}**.", right=tr(right)), icon=":material/science:")
    st.caption(detail)


def _countdown(state: ClassState) -> None:
    left = state.seconds_left()
    if left is not None:
        question_console.countdown(left)


def _answer_form(code: str, step: int) -> None:
    question = _step(step).ask
    with st.form(f"class_answer_form_{step}", border=False, enter_to_submit=True):
        if question.kind == "number":
            value = st.number_input(tr("A whole number from {low} to {high}", low=question.low,
                                       high=question.high),
                                    min_value=question.low, max_value=question.high,
                                    value=None, step=1, key=f"class_number_{step}")
        else:
            value = st.radio(tr("Your answer"), question.choices, index=None, format_func=tr,
                             key=f"class_choice_{step}", horizontal=True)
        sent = st.form_submit_button(tr("Send my answer"), type="primary")
    if not sent:
        return
    if value is None:
        st.warning(tr("Choose or type an answer first."), icon=":material/edit:")
        return
    try:
        st.session_state[answer_key(code, step)] = class_room().answer(code, seat(), value)
    except classroom.ClassUnavailable as error:
        # Kept and sent again by the next poll that reaches the class server (_mine).
        st.session_state[answer_key(code, step)] = question.parse(value)[0]
        st.session_state[pending_key(code, step)] = True
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
