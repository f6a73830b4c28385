"""Write a lesson: a lesson file in an editor, each step's answer computed live beside it."""

import streamlit as st

from stockdemo import ui
from stockdemo.i18n import N_
from stockdemo.ui import authoring

ui.setup_page(
    N_("Write a lesson"), ":material/edit_note:",
    N_("Change the lesson file and press **Ctrl+Enter**: beside it, each step's answer is computed "
       "live, and each challenge's check is tried on its reference answer (it must pass) and on its "
       "starting code (it must fail). How to write one: `docs/lesson.md`."),
    __file__,
)
ui.url_messages("pages/author.py")

text, lesson, refused = authoring.draft()
authoring.sources()
editor, preview = st.columns(2, gap="medium")
with editor:
    authoring.editor(text, lesson, refused)
with preview:
    if refused is not None:
        authoring.refusal(refused)
    else:
        authoring.exports(lesson)
        authoring.preview(lesson)
