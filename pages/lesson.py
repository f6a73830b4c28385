"""Lesson: forty-five minutes of class in live experiments, one screen each; ours or a teacher's."""

import streamlit as st

from stockdemo import ui
from stockdemo.config import RunConfig
from stockdemo.i18n import N_, tr
from stockdemo.lessons.said import said
from stockdemo.ui.graph_view import graph_view

ui.setup_page(
    N_("Lesson"), ":material/school:",
    N_("Read the question aloud, let the room guess, then press **Reveal the answer**: the answer is "
       "computed live. Teacher notes with timings: `docs/lesson.md`."),
    __file__,
    class_intros=(
        N_("Read the question aloud and press **Open answers**: the class answers on their screens. "
           "Then press **Reveal now**: the answer is computed live. Teacher notes: `docs/lesson.md`."),
        N_("Your teacher asks the question: type your guess and press **Send my answer**; when the "
           "teacher reveals it, the answer is computed live, here on your screen."),
    ),
)


@ui.fragment
def live() -> None:
    lesson = ui.shown_lesson()
    total = len(lesson.steps)
    number = min(ui.lesson_step(), total)
    step = lesson.steps[number - 1]
    # A following student's step is the teacher's: Back and Next would only snap back.
    hint = ui.controls_locked()
    held = hint is not None
    back, progress, forward = st.columns([1, 4, 1], vertical_alignment="center")
    back.button(tr("Back"), key="lesson_back", icon=":material/arrow_back:", disabled=number == 1 or held,
                on_click=ui.go_to_step, args=(number - 1,), width="stretch", help=hint)
    progress.progress(number / total, text=tr("**Step {number} of {total}**", number=number, total=total))
    forward.button(tr("Next"), key="lesson_next", icon=":material/arrow_forward:", help=hint,
                   disabled=number == total or held, on_click=ui.go_to_step, args=(number + 1,),
                   width="stretch", type="primary")

    if step.challenge is not None:
        # The class's turn at the code: its teacher asks the challenge from the title's row,
        # on screen above the question's console.
        title, ask = st.columns([3, 2], vertical_alignment="center")
        title.header(f"{number}. {said(step.title)}", anchor=False)
        with ask, st.container(horizontal=True, horizontal_alignment="right"):
            ui.lesson_challenge(step.challenge.id, step.challenge.start)
    else:
        st.header(f"{number}. {said(step.title)}", anchor=False)
    st.markdown(said(step.context))
    # In class mode the question is the class's: asked once, answered, revealed by the teacher.
    in_class = ui.lesson_question(number)
    if in_class is None:
        st.subheader(f":material/help: {said(step.question)}", anchor=False)
        revealed = ui.step_revealed(number)
        if revealed:
            with st.spinner(tr("Running it live…")):
                answer = ui.cached_answer(step).said()
            figure, words = st.columns([1, 1], vertical_alignment="center", gap="large")
            figure.metric(answer.label, answer.value)
            words.markdown(answer.detail)
        else:
            st.button(tr("Reveal the answer"), key="lesson_reveal", icon=":material/visibility:",
                      type="primary", on_click=ui.reveal_step, args=(number,))
    else:
        revealed = in_class.revealed
    # The link first: on a 1280x720 projector the answer and the link fit above the fold.
    # (A student's link waits for the reveal: the experiment computes the answer.)
    if in_class is None or in_class.may_explore:
        ui.page_link(step.page, said(step.link_label), ":material/open_in_new:", query=step.query or None)
    if revealed and isinstance(step.settings, RunConfig) \
            and st.toggle(tr("Show the graph of this run"), key="lesson_graph_shown"):
        graph_view(ui.cached_picture(step.settings, "auto"), key="lesson_graph", url_key=None, height=420)
    if in_class is None:
        ui.lesson_picker(lesson)
    ui.lesson_drawn()  # only a run that got this far has shown the class's question


live()
