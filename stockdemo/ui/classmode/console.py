"""Class mode for the teacher: the Class page's console, the results and CSV (starting a class
is ``start.py``).

The results stay hidden until the reveal (the teacher's screen is on the projector).
The Class page shows a summary per question and a CSV of every answer (question, seat
number, answer, right, seconds). A question as the teacher runs it is in
``question_console.py``.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import segno
import streamlit as st

from stockdemo import classroom, theme
from stockdemo.classroom import ClassError, Teacher, questions_of, results_csv, summarise
from stockdemo.config import CLASS_KEY, STEP, show_class_code
from stockdemo.i18n import tr, trn
from stockdemo.i18n.numbers import number, percent
from stockdemo.ui import steps
from stockdemo.ui.classmode.keys import PUBLISHED, TEACHER
from stockdemo.ui.classmode.question_console import TALLY_S, question_console, teachers_lesson
from stockdemo.ui.classmode.session import class_room, say, teacher
from stockdemo.ui.language import fragment
from stockdemo.ui.routes import absolute, page_url

RESULTS_S = 3.0  # the Class page's summary table


# --------------------------------------------------------------------------- the Class page

def join_link(code: str) -> str:
    """What students open: the Playground, joined to the class. No key in it."""
    return absolute(f"{page_url(classroom.PLAYGROUND)}?{urlencode({CLASS_KEY: code})}")


def teacher_console() -> None:
    """The Class page for the teacher: code, link and QR code, who is here, questions, results."""
    current = teacher()
    link = join_link(current.code)
    code_col, qr_col = st.columns([3, 2], vertical_alignment="center")
    with code_col:
        st.markdown(tr("Class code"))
        st.markdown(f"<p style='font-size:3.2rem;font-weight:700;letter-spacing:.12em;"
                    f"margin:0'>{show_class_code(current.code)}</p>", unsafe_allow_html=True)
        st.markdown(tr("Join link (students open it, or type the code on the **Class** page):"))
        st.code(link, language=None)
        _presence(current)
    with qr_col:
        qr = segno.make(link, error="m")
        st.image(qr.svg_inline(scale=6, dark=theme.TEXT), caption=tr("Scan to join"), width=260)
    st.divider()
    lesson = teachers_lesson()
    numbers = list(range(1, len(lesson.steps) + 1))
    step = st.selectbox(tr("Lesson question"), numbers,
                        index=min(steps.kept_step() or STEP.default, len(numbers)) - 1,
                        key="class_question_step",
                        format_func=lambda n: f"{n}. {tr(lesson.steps[n - 1].question).replace('`', '')}")
    steps.keep_step(step)  # the Lesson opens at the question picked here
    question_console(current, step)
    st.divider()
    st.subheader(tr("Results"), anchor=False)
    _results(current)
    st.divider()
    with st.expander(tr("Teacher key: keep it private (it steers the class)")):
        st.caption(tr("With the code, it lets you teach this class again after a reload. "
                      "Never put it on the projector or in a link."))
        st.code(current.key, language=None)
    with st.popover(tr("End the class"), icon=":material/logout:"):
        st.markdown(tr("Every student's page goes back to working on its own, and the class's "
                       "answers are deleted: download them first."))
        if st.button(tr("End it now"), key="class_end", type="primary"):
            try:
                class_room().end(current)
            except ClassError as error:
                say(error)
            st.session_state.pop(TEACHER, None)
            st.session_state.pop(PUBLISHED, None)
            st.rerun()


@fragment(run_every=TALLY_S)
def _presence(current: Teacher) -> None:
    try:
        connected, following = class_room().presence(current)
    except ClassError as error:
        say(error)
        return
    st.markdown(":material/group: " + tr("**{connected}** connected · **{following}** following",
                                         connected=connected, following=following))


@fragment(run_every=RESULTS_S)
def _results(current: Teacher) -> None:
    """A summary per question, and every answer as CSV: the rows this table shows.

    The CSV is handed to the button as text, not as a callable run on the click.
    Streamlit keeps a file made on a click for only two script runs of any
    session after it is made, and on a class's server those end every few
    milliseconds: the download would be cancelled before the browser fetched it.
    Text given to the button stays until the table is redrawn with other rows;
    the CSV of a class's answers is a few kB.
    """
    try:
        rows, live = class_room().results(current)
        challenges = class_room().challenge_results(current)
    except ClassError as error:
        say(error)
        return
    if not rows and not challenges:
        st.caption(tr("No answers yet. Each question's answers show here once they come in."))
        return
    if rows:
        _summary_table(rows, live, questions_of(teachers_lesson()))
    if challenges:
        st.caption(trn("Challenges: {n} final run, {passing} passing.",
                       "Challenges: {n} final runs, {passing} passing.", len(challenges),
                       passing=sum(r.passes for r in challenges)))
    st.download_button(
        tr("Download every answer (CSV)"), results_csv(rows, challenges), on_click="ignore",
        file_name=f"class-{current.code}-answers.csv", mime="text/csv", icon=":material/download:",
        key="class_csv", help=tr("Question id, seat number, answer (a choice's id), right or not, "
                                 "seconds to answer; a challenge's final code, whether it passes, "
                                 "seconds to its first pass and its runs. Seats are numbers: nothing "
                                 "says who a student is."))


def _summary_table(rows: list, live: dict[int, str], questions: dict) -> None:
    table = pd.DataFrame([{
        tr("Question"): s.question, tr("Answers"): s.answers,
        tr("Live answer"): str(s.live) if s.live else tr("not revealed"),
        tr("Right"): "" if s.right is None else f"{number(s.right)} ({percent(s.share_right)})",
        tr("Median time (s)"): number(s.median_s, 1), tr("Counted right"): tr(s.rule),
    } for s in summarise(rows, live, questions)])
    st.dataframe(table, hide_index=True, width="stretch", key="class_summary",
                 alt=tr("One row per question: answers, the live answer, how many were right, "
                        "the median time to answer"))
