"""One question as the teacher runs it: open the answers (with a countdown that locks them,
or none), watch how many of the connected students have answered, reveal now whatever the
count; then the live answer, the share of right answers, the median time and the distribution.
"""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go
import streamlit as st

from stockdemo import theme
from stockdemo.classroom import (
    LESSON,
    ClassError,
    Teacher,
    live_value,
    page_params,
    revealed_words,
    summarise,
)
from stockdemo.config import COUNTDOWN, STEP, countdown_choices
from stockdemo.i18n import tr, trn
from stockdemo.i18n.numbers import number, percent
from stockdemo.lessons import Lesson, Step, builtin_lesson
from stockdemo.lessons.code_answers import runs_for
from stockdemo.ui import compat, steps
from stockdemo.ui.caches import cached_answer
from stockdemo.ui.classmode.keys import CONSOLE_MESSAGE, countdown_key
from stockdemo.ui.classmode.session import class_lesson, class_room, publish, say, teacher
from stockdemo.ui.language import fragment
from stockdemo.ui.metrics import Metric, metric_row

TALLY_S = 1.0  # the teacher's count of answers, and seconds left


def lesson_console(number: int) -> bool:
    """On the Lesson page: the step goes to the class, with its question and the answers
    console -> whether the class has seen its live answer."""
    publish(LESSON, page_params(LESSON, {STEP.name: str(number)}))
    st.subheader(f":material/help: {tr(teachers_lesson().steps[number - 1].question)}", anchor=False)
    with st.container(border=True):
        return question_console(teacher(), number)


def teachers_lesson() -> Lesson:
    """The lesson the teacher's class teaches."""
    return class_lesson() or builtin_lesson()


def lesson_step(number: int) -> Step:
    """Step ``number`` of the class's lesson (its last, past its end)."""
    steps = teachers_lesson().steps
    return steps[min(number, len(steps)) - 1]


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
        st.info(tr("This class has ended."))
        return False
    if state.question == step and not state.revealed:
        if st.button(tr("Reveal now"), key="class_reveal", icon=":material/visibility:",
                     type="primary", help=tr("Close the answers and show the live answer, "
                                             "whoever has answered.")):
            with st.spinner(tr("Running it live…")), runs_for(compat.session_id()):
                answer = cached_answer(lesson_step(step))
            try:
                room.reveal(current, answer.label, answer.value, answer.detail)
            except ClassError as error:
                say(error)
            else:
                steps.reveal_step(step)
                st.rerun()  # the console as it is now: results instead of the button
        _tally(current, step)
        return False
    _tally(current, step)  # the results, once revealed
    row = st.container(horizontal=True, vertical_alignment="bottom", gap="small")
    row.segmented_control(tr(COUNTDOWN.label), countdown_choices(), default=COUNTDOWN.default,
                          required=True, key=countdown_key(step), help=tr(COUNTDOWN.help),
                          format_func=lambda s: tr("{seconds} s", seconds=s) if s else tr("no limit"))
    row.button(tr("Open answers again") if revealed else tr("Open answers"), key="class_open",
               icon=":material/how_to_vote:", on_click=_open, args=(current, step),
               type="secondary" if revealed else "primary")
    return revealed is not None


def _open(current: Teacher, step: int) -> None:
    """The button's callback, before the run: the console then draws the open question."""
    try:
        class_room().open_question(current, step, st.session_state.get(countdown_key(step)) or 0)
    except ClassError as error:
        st.session_state[CONSOLE_MESSAGE] = error


@fragment(run_every=TALLY_S)
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
        count = trn("**{n}** of **{connected}** connected have answered",
                    "**{n}** of **{connected}** connected have answered", answered, connected=connected)
        if state.locked():
            st.markdown(tr("Time is up: answers are locked. {count}. **Reveal now** shows the answer.",
                           count=count))
        else:
            st.markdown(tr("Question {step} is **open**. {count}; the answers stay hidden until you "
                           "reveal.", step=step, count=count))
            left = state.seconds_left()
            if left is not None:
                countdown(left)
    elif revealed is not None:
        _revealed(current, step, revealed)
    elif answered:
        st.markdown(trn("Question {step} is closed: {n} answer, not revealed yet.",
                        "Question {step} is closed: {n} answers, not revealed yet.", answered, step=step))
    else:
        st.markdown(tr("Question {step} is **not open**: open the answers when you have asked it.",
                       step=step))


def _revealed(current: Teacher, step: int, live: dict[str, str]) -> None:
    """After the reveal: the live answer, how many were right, how fast, and the distribution."""
    question = lesson_step(step).ask
    label, value, detail = revealed_words(live)
    right = question.correct(live_value(live))
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
        st.metric(label, value)
        if rows:
            done = summarise(rows, {step: live_value(live)}, {step: question})[0]
            metric_row([
                Metric(tr("Answers"), number(done.answers)),
                Metric(tr("Right"), percent(done.share_right),
                       help=tr("{right} of {answers}; counted right: {rule}.", right=done.right,
                               answers=done.answers, rule=tr(done.rule))),
                Metric(tr("Median time to answer"), tr("{seconds} s", seconds=number(done.median_s, 1))),
            ])
        else:
            st.markdown(tr("Nobody answered this question."))
        st.markdown(detail)
    if not rows:
        return
    chart_col.plotly_chart(
        distribution_figure(step, counts, right), width="stretch", key=f"class_distribution_{step}",
        config={"displayModeBar": False},
        alt=tr("Bar chart of the class's answers to question {step}: {counts}", step=step,
               counts=", ".join(f"{tr(v)}: {n}" for v, n in counts.items()))
            + (tr("; the live answer is {right}", right=tr(right)) if right else ""))


def distribution_figure(step: int, counts: dict[str, int], right: str | None) -> go.Figure:
    """Bars of how many students gave each answer; the right ones in green."""
    question = lesson_step(step).ask
    values = list(question.choices) if question.kind == "choice" else sorted(counts, key=int)
    heights = [counts.get(v, 0) for v in values]
    colours = [theme.GREEN if question.is_right(v, right) else theme.BLUE for v in values]
    fig = go.Figure(go.Bar(x=[tr(str(v)) for v in values], y=heights, marker_color=colours,
                           text=heights, textposition="outside", cliponaxis=False))
    fig.update_layout(height=280, margin=dict(l=40, r=10, t=24, b=40),
                      font=dict(family=theme.FONT_FAMILY, size=theme.FONT_SIZE, color=theme.TEXT),
                      xaxis=dict(type="category", title=tr("answer")),
                      yaxis=dict(title=tr("students"), rangemode="tozero",
                                 dtick=1 if max(heights, default=0) < 10 else None),
                      plot_bgcolor="white", showlegend=False)
    return fig


def countdown(seconds_left: float) -> None:
    """Seconds left to answer, counted down by the browser (a CSS animation of a counter),
    so no rerun a second per student is needed; each rerun starts it from the server's clock."""
    n = max(0, math.ceil(seconds_left))
    left = html.escape(trn("{n} second left to answer", "{n} seconds left to answer", n), quote=True)
    st.html(
        "<style>@property --sd-left { syntax: '<integer>'; initial-value: 0; inherits: true; }"
        f"@keyframes sd-count-{n} {{ from {{ --sd-left: {n}; }} to {{ --sd-left: 0; }} }}"
        ".sd-countdown b::before { counter-reset: sd-left var(--sd-left); content: counter(sd-left); }"
        "</style>"
        f"<p class='sd-countdown' role='timer' data-seconds-left='{n}' "
        f"aria-label='{left}' "
        f"style='animation: sd-count-{n} {n}s steps({n}, end) forwards; --sd-left: {n}; margin: 0'>"
        + tr("{counter} s left to answer", counter="<b></b>") + "</p>")
