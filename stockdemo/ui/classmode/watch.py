"""From a page: a class part asks to be rerun the moment its class changes, and takes what the
push thread read for it (one ``push.Pusher`` per server process)."""

from __future__ import annotations

import streamlit as st

from stockdemo.classroom import ClassState, replicas
from stockdemo.ui import compat
from stockdemo.ui.classmode.push import Pusher
from stockdemo.ui.classmode.session import class_room


@st.cache_resource(show_spinner=False)
def pusher() -> Pusher:
    push = Pusher(class_room())
    push.roll = replicas.start_roll()  # None in one process (no shared class store)
    return push


def watch_class(code: str | None, part: str = "bar", on: bool = True, seat: str | None = None,
                following: bool = False) -> None:
    """From inside a class part (a fragment): rerun it the moment ``code`` changes.

    ``code`` None: this tab is in no class; ``on`` False: not this part any more.
    ``seat`` (from the bar): the tab's seat, kept present while it is connected.
    """
    here = compat.this_fragment_run()
    if here is None:
        return
    session_id, rerun = here
    pusher().watch(session_id, code, part, rerun if on else None, seat=seat, following=following)


def latest_state(code: str) -> ClassState | None:
    """From a page: the class as this process's push thread read it a moment ago, or None."""
    return pusher().latest(code) if compat.runtime_exists() else None


def page_opened() -> bool:
    """From a page's whole run: the push opened this page (``Pusher._page_run``), and the
    browser has the page but not its address yet."""
    session_id = compat.session_id()
    return session_id is not None and pusher().page_opened(session_id)


def given_state() -> ClassState | None:
    """From the class bar: the class as read to push this run (``Pusher.given_state``), else None."""
    session_id = compat.session_id()
    return pusher().given_state(session_id) if session_id is not None else None


def move_asked() -> bool:
    """From the class bar: this tab is to reload on another replica (``Pusher.balance``)."""
    session_id = compat.session_id()
    return session_id is not None and pusher().move_asked(session_id)
