"""Class: students follow the teacher's pages and answer each lesson question before the reveal."""

import streamlit as st

from stockdemo import ui
from stockdemo.ui import class_teacher
from stockdemo.ui import classroom as class_ui

ui.setup_page(
    "Class", ":material/groups:",
    "Teacher: press **Start a class** and put the code on the projector; students open the link "
    "or type the code, and watch their page follow yours. Open a question: they answer before "
    "you reveal the live answer, and the results are yours to keep.",
    __file__,
)

if class_ui.teacher() is not None:
    class_teacher.teacher_console()
elif class_ui.student_code() is not None:
    links = st.container(horizontal=True)
    with links:
        ui.page_link("pages/playground.py", "Open the Playground", ":material/tune:")
        ui.page_link("pages/lesson.py", "Open the Lesson", ":material/school:")
    st.button("Leave the class", key="class_leave", icon=":material/logout:",
              on_click=class_ui.leave)
else:
    student, teacher = st.columns(2, gap="large")
    with student:
        st.subheader("Join a class", anchor=False)
        class_ui.join_box()
    with teacher:
        st.subheader("Teach a class", anchor=False)
        class_teacher.start_box()
