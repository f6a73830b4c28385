"""Class mode for the teacher: start a class, run each question, keep the results.

A question as a teacher runs it: open answers (with a countdown that locks them,
or none), watch how many of the connected students have answered, reveal now
whatever the count. The results stay hidden until the reveal (the teacher's
screen is on the projector); then the distribution, the share of right answers
and the median time to answer. The Class page adds a summary per question and
a CSV of every answer (question, seat number, answer, right, seconds).
"""

from __future__ import annotations

import math
from urllib.parse import urlencode, urlsplit

import pandas as pd
import plotly.graph_objects as go
import segno
import streamlit as st

from stockdemo import classroom, lesson, theme, ui
from stockdemo.classroom import (
    LESSON,
    QUESTIONS,
    ClassError,
    Teacher,
    page_params,
    results_csv,
    summarise,
)
from stockdemo.config import CLASS_KEY, COUNTDOWN, COUNTDOWN_CHOICES, STEP, parse_class_code, show_class_code
from stockdemo.ui.class_session import PUBLISHED, TEACHER, class_room, leave, publish, say, teacher

TALLY_S = 1.0  # the teacher's count of answers, and seconds left
RESULTS_S = 3.0  # the Class page's summary table
CONSOLE_MESSAGE = "class_console_message"  # a refusal met by a button's callback, shown once


# --------------------------------------------------------------------------- starting

def start_box() -> None:
    """Start a class, or take one back with its key (after a reload)."""
    if st.button("Start a class", key="class_start", type="primary", icon=":material/podium:"):
        try:
            st.session_state[TEACHER] = class_room().start()
        except ClassError as error:
            say(error)
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
                    st.session_state.pop(PUBLISHED, None)
                    st.rerun()


def join_link(code: str) -> str:
    """What students open: the Playground, joined to the class. No key in it."""
    url = f"{ui.page_url(classroom.PLAYGROUND)}?{urlencode({CLASS_KEY: code})}"
    here = st.context.url
    if not here:
        return url  # no browser (AppTest): a path relative to the app
    parts = urlsplit(here)
    return f"{parts.scheme}://{parts.netloc}{url}"


# --------------------------------------------------------------------------- the Class page

def teacher_console() -> None:
    """The Class page for the teacher: code, link and QR code, who is here, questions, results."""
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
    step = st.selectbox("Lesson question", list(QUESTIONS),
                        index=st.session_state.get("lesson_step", STEP.default) - 1,
                        key="class_question_step",
                        format_func=lambda n: f"{n}. {lesson.STEPS[n - 1].question.replace('`', '')}")
    st.session_state["lesson_step"] = step  # the Lesson opens at the question picked here
    question_console(current, step)
    st.divider()
    st.subheader("Results", anchor=False)
    _results(current)
    st.divider()
    with st.expander("Teacher key: keep it private (it steers the class)"):
        st.caption("With the code, it lets you teach this class again after a reload. "
                   "Never put it on the projector or in a link.")
        st.code(current.key, language=None)
    with st.popover("End the class", icon=":material/logout:"):
        st.markdown("Every student's page goes back to working on its own, and the class's "
                    "answers are deleted: download them first.")
        if st.button("End it now", key="class_end", type="primary"):
            try:
                class_room().end(current)
            except ClassError as error:
                say(error)
            st.session_state.pop(TEACHER, None)
            st.session_state.pop(PUBLISHED, None)
            st.rerun()


@st.fragment(run_every=TALLY_S)
def _presence(current: Teacher) -> None:
    try:
        connected, following = class_room().presence(current)
    except ClassError as error:
        say(error)
        return
    st.markdown(f":material/group: **{connected}** connected · **{following}** following")


@st.fragment(run_every=RESULTS_S)
def _results(current: Teacher) -> None:
    """A summary per question, and every answer as CSV: the rows this table shows.

    The CSV is handed to the button as text, not as a callable run on the click.
    Streamlit keeps a file made on a click for only two script runs of any
    session after it is made, and on a class's server those end every few
    milliseconds: the teacher's download was cancelled before the browser
    fetched it (CI, stop 33). Text given to the button stays until the table is
    redrawn with other rows; the CSV of 60 students' answers is a few kB.
    """
    try:
        rows, live = class_room().results(current)
    except ClassError as error:
        say(error)
        return
    if not rows:
        st.caption("No answers yet. Each question's answers show here once they come in.")
        return
    table = pd.DataFrame([{
        "Question": s.question, "Answers": s.answers, "Live answer": s.live or "not revealed",
        "Right": "" if s.right is None else f"{s.right} ({s.share_right:.0%})",
        "Median time (s)": round(s.median_s, 1), "Counted right": s.rule,
    } for s in summarise(rows, live)])
    st.dataframe(table, hide_index=True, width="stretch", key="class_summary",
                 alt="One row per question: answers, the live answer, how many were right, "
                     "the median time to answer")
    st.download_button(
        "Download every answer (CSV)", results_csv(rows), on_click="ignore",
        file_name=f"class-{current.code}-answers.csv", mime="text/csv", icon=":material/download:",
        key="class_csv", help="Question, seat number, answer, right or not, seconds to answer. "
                              "Seats are numbers: nothing says who a student is.")


# --------------------------------------------------------------------------- one question

def lesson_console(number: int) -> bool:
    """On the Lesson page: the step goes to the class, with its question and the answers
    console -> whether the class has seen its live answer."""
    publish(LESSON, page_params(LESSON, {STEP.name: str(number)}))
    st.subheader(f":material/help: {lesson.STEPS[number - 1].question}", anchor=False)
    with st.container(border=True):
        return question_console(teacher(), number)


def question_console(current: Teacher, step: int) -> bool:
    """Open a step's question, watch the count, reveal now -> whether its answer is out."""
    room = class_room()
    if CONSOLE_MESSAGE in st.session_state:
        say(st.session_state.pop(CONSOLE_MESSAGE))
    try:
        state = room.poll(current.code, None, False)
        revealed = room.revealed_answer(current.code, step)
    except ClassError as error:
        say(error)
        return False
    if state is None:
        st.info("This class has ended.")
        return False
    if state.question == step and not state.revealed:
        if st.button("Reveal now", key="class_reveal", icon=":material/visibility:",
                     type="primary", help="Close the answers and show the live answer, "
                                          "whoever has answered."):
            with st.spinner("Running it live…"):
                answer = ui.cached_answer(step)
            try:
                room.reveal(current, answer.label, answer.value, answer.detail)
            except ClassError as error:
                say(error)
            else:
                st.session_state.setdefault("lesson_revealed", set()).add(step)
                st.rerun()  # the console as it is now: results instead of the button
        _tally(current, step)
        return False
    _tally(current, step)  # the results, once revealed
    row = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
    row.segmented_control(COUNTDOWN.label, COUNTDOWN_CHOICES, default=COUNTDOWN.default,
                          required=True, key=f"class_countdown_{step}", help=COUNTDOWN.help,
                          format_func=lambda s: f"{s} s" if s else "no limit")
    row.button("Open answers again" if revealed else "Open answers", key="class_open",
               icon=":material/how_to_vote:", on_click=_open, args=(current, step),
               type="secondary" if revealed else "primary")
    return revealed is not None


def _open(current: Teacher, step: int) -> None:
    """The button's callback, before the run: the console then draws the open question."""
    try:
        class_room().open_question(current, step, st.session_state.get(f"class_countdown_{step}") or 0)
    except ClassError as error:
        st.session_state[CONSOLE_MESSAGE] = error


@st.fragment(run_every=TALLY_S)
def _tally(current: Teacher, step: int) -> None:
    """The live count while answers are open; the results once the answer is out."""
    room = class_room()
    try:
        state = room.poll(current.code, None, False)
        answered, connected = room.tally(current, step)
        revealed = room.revealed_answer(current.code, step)
    except ClassError as error:
        say(error)
        return
    if state is None:
        return
    if state.question == step and not state.revealed:
        count = f"**{answered}** of **{connected}** connected have answered"
        if state.locked():
            st.markdown(f"Time is up: answers are locked. {count}. **Reveal now** shows the answer.")
        else:
            st.markdown(f"Question {step} is **open**. {count}; the answers stay hidden until "
                        "you reveal.")
            left = state.seconds_left()
            if left is not None:
                countdown(left)
    elif revealed is not None:
        _revealed(current, step, revealed)
    elif answered:
        st.markdown(f"Question {step} is closed: {answered} answers, not revealed yet.")
    else:
        st.markdown(f"Question {step} is **not open**: open the answers when you have asked it.")


def _revealed(current: Teacher, step: int, live: dict[str, str]) -> None:
    """After the reveal: the live answer, how many were right, how fast, and the distribution."""
    question = QUESTIONS[step]
    right = question.correct(live["value"])
    try:
        counts = class_room().distribution(current, step)
        rows = [r for r in class_room().results(current)[0] if r.question == step]
    except ClassError as error:
        say(error)
        return
    # The class's figures first, under the live answer: on a 1280x720 projector they
    # stay above the fold with the question and the answer; the sentence comes after.
    answer_col, chart_col = st.columns([1, 1], gap="large")
    with answer_col:
        st.metric(live["label"], live["value"])
        if rows:
            done = summarise(rows, {step: live["value"]})[0]
            ui.metric_row([
                ui.Metric("Answers", str(done.answers)),
                ui.Metric("Right", f"{done.share_right:.0%}", help=f"{done.right} of {done.answers}; "
                          f"counted right: {done.rule}."),
                ui.Metric("Median time to answer", f"{done.median_s:.1f} s"),
            ])
        else:
            st.markdown("Nobody answered this question.")
        st.markdown(live["detail"])
    if not rows:
        return
    chart_col.plotly_chart(
        distribution_figure(step, counts, right), width="stretch", key=f"class_distribution_{step}",
        config={"displayModeBar": False},
        alt=f"Bar chart of the class's answers to question {step}: "
            + ", ".join(f"{v}: {n}" for v, n in counts.items())
            + (f"; the live answer is {right}" if right else ""))


def distribution_figure(step: int, counts: dict[str, int], right: str | None) -> go.Figure:
    """Bars of how many students gave each answer; the right ones in green."""
    question = QUESTIONS[step]
    values = list(question.choices) if question.kind == "choice" else sorted(counts, key=int)
    heights = [counts.get(v, 0) for v in values]
    colours = [theme.GREEN if question.is_right(v, right) else theme.BLUE for v in values]
    fig = go.Figure(go.Bar(x=[str(v) for v in values], y=heights, marker_color=colours,
                           text=heights, textposition="outside", cliponaxis=False))
    fig.update_layout(height=280, margin=dict(l=40, r=10, t=24, b=40),
                      font=dict(family=theme.FONT_FAMILY, size=theme.FONT_SIZE, color=theme.TEXT),
                      xaxis=dict(type="category", title="answer"),
                      yaxis=dict(title="students", rangemode="tozero",
                                 dtick=1 if max(heights, default=0) < 10 else None),
                      plot_bgcolor="white", showlegend=False)
    return fig


def countdown(seconds_left: float) -> None:
    """Seconds left to answer, counted down by the browser (a CSS animation of a counter),
    so no rerun a second per student is needed; each rerun starts it from the server's clock."""
    n = max(0, math.ceil(seconds_left))
    st.html(
        "<style>@property --sd-left { syntax: '<integer>'; initial-value: 0; inherits: true; }"
        f"@keyframes sd-count-{n} {{ from {{ --sd-left: {n}; }} to {{ --sd-left: 0; }} }}"
        ".sd-countdown b::before { counter-reset: sd-left var(--sd-left); content: counter(sd-left); }"
        "</style>"
        f"<p class='sd-countdown' role='timer' data-seconds-left='{n}' "
        f"aria-label='{n} seconds left to answer' "
        f"style='animation: sd-count-{n} {n}s steps({n}, end) forwards; --sd-left: {n}; margin: 0'>"
        "<b></b> s left to answer</p>")

