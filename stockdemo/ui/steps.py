"""The Lesson's step: on screen and in the URL, its answer revealed, its question as asked.

In a class the question is the class's (asked once, answered, revealed by the teacher):
a listener of ``hooks.LESSON_QUESTION`` draws it and says what the step may show.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from stockdemo.config import STEP
from stockdemo.ui import hooks, keys


@dataclass(frozen=True)
class InClass:
    """What a Lesson step may show in a class, besides the question the class parts drew."""

    revealed: bool  # the class has seen the live answer: its graph may be drawn
    may_explore: bool  # the step's link to its experiment (which computes the answer)


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
    """A Your code step: a listener may offer to ask it of a class (class mode: its teacher's
    "Ask the class" button, which opens Your code with the challenge open)."""
    hooks.ask(hooks.LESSON_CHALLENGE, challenge, source)


def lesson_drawn() -> None:
    """Last in the Lesson's live part: the step is drawn, all of it (``hooks.LESSON_DRAWN``).

    Said at the end: a run stopped half-way by another rerun request has not drawn it.
    """
    hooks.fire(hooks.LESSON_DRAWN)
