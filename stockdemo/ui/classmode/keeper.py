"""The teacher's tab keeps the class's key, so a reload or a reconnect goes on teaching.

The key lives in this browser tab's sessionStorage, never in a link (the address bar
is on the projector): a reload, or a reconnect to another replica after one was lost,
gives the new session nothing, so the tab hands the key back. sessionStorage is per
tab and goes with it; students' tabs never mount this.
"""

from __future__ import annotations

import streamlit as st

from stockdemo.classroom import ClassError, Teacher
from stockdemo.ui.assets import component_js
from stockdemo.ui.classmode.keys import ASKED, CODE, KEEPER_ASK, KEPT, PUBLISHED, TEACHER
from stockdemo.ui.classmode.session import class_room, teacher

_KEEPER = st.components.v2.component(
    "stockdemo_class_keeper",
    html="<span hidden></span>",
    js=component_js("class_keeper"),
)


def keep_teacher() -> None:
    """Once per session: the teacher's tab keeps the key, or hands back one it kept.

    Drawn in the sidebar, so the page's own layout has no element more; not drawn
    without a browser (AppTest), where there is no tab to keep anything.
    """
    if not st.context.url:
        return  # no browser: AppTest
    current = teacher()
    where = st.sidebar
    if current is not None:
        kept = f"{current.code}:{current.key}"
        if st.session_state.get(KEPT) != kept:
            st.session_state[KEPT] = kept
            with where:
                _KEEPER(data={"save": kept}, key="class_keeper_save", height=0)
    elif st.session_state.get(KEPT):
        st.session_state[KEPT] = ""
        with where:
            _KEEPER(data={"forget": True}, key="class_keeper_forget", height=0)
    elif ASKED not in st.session_state and CODE not in st.session_state:
        st.session_state[ASKED] = True  # a new session: the tab is asked once
        with where:
            _KEEPER(data={"ask": True}, key=KEEPER_ASK, height=0,
                    on_restored_change=_restored)


def _restored() -> None:
    """The tab handed back a key it kept: this session is the teacher again, if it still fits."""
    text = (st.session_state.get(KEEPER_ASK) or {}).get("restored")
    st.session_state[KEPT] = text or ""
    code, _, key = str(text or "").partition(":")
    candidate = Teacher(code, key)
    try:
        class_room().presence(candidate)  # refused unless the key is this class's
    except ClassError:
        st.session_state[KEPT] = ""
        return
    st.session_state[TEACHER] = candidate
    st.session_state.pop(PUBLISHED, None)
