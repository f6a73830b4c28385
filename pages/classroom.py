"""Class: students follow the teacher's pages and answer each lesson question before the reveal."""

import streamlit as st

from stockdemo import ui
from stockdemo.i18n import N_, tr
from stockdemo.ui import classmode

ui.setup_page(
    N_("Class"), ":material/groups:",
    N_("Teacher: press **Start a class** and put the code on the projector; students open the link "
       "or type the code, and watch their page follow yours. Open a question: they answer before "
       "you reveal the live answer, and the results are yours to keep."),
    __file__,
)

if classmode.teacher() is not None:
    classmode.teacher_console()
elif classmode.student_code() is not None:
    links = st.container(horizontal=True)
    with links:
        ui.page_link("pages/playground.py", tr("Open the Playground"), ":material/tune:")
        ui.page_link("pages/lesson.py", tr("Open the Lesson"), ":material/school:")
    st.button(tr("Leave the class"), key="class_leave", icon=":material/logout:",
              on_click=classmode.leave)
else:
    student, teacher = st.columns(2, gap="large")
    with student:
        st.subheader(tr("Join a class"), anchor=False)
        classmode.join_box()
    with teacher:
        st.subheader(tr("Teach a class"), anchor=False)
        classmode.start_box()
