"""The app's pages and the links between them: the page list, a page's URL, links, share links.

Presenter mode lives here too: it travels with every link the app makes, as the language
does (``language.in_links``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from stockdemo.config import LANG, PRESENT, url_value
from stockdemo.i18n import N_
from stockdemo.ui import keys
from stockdemo.ui.language import in_links

ROOT = Path(__file__).resolve().parents[2]

# (file relative to the app root, title (a msgid: tr() it where shown), icon). A page shows in
# the menu once its file exists.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", N_("Home"), ":material/home:"),
    ("pages/playground.py", N_("Playground"), ":material/tune:"),
    ("pages/code.py", N_("Your code"), ":material/code:"),
    ("pages/train.py", N_("Train and predict"), ":material/show_chart:"),
    ("pages/static_vs_dynamic.py", N_("Static vs dynamic"), ":material/compare_arrows:"),
    ("pages/debugging.py", N_("Debugging"), ":material/bug_report:"),
    ("pages/lab.py", N_("Lab"), ":material/science:"),
    ("pages/lesson.py", N_("Lesson"), ":material/school:"),
    ("pages/author.py", N_("Write a lesson"), ":material/edit_note:"),
    ("pages/classroom.py", N_("Class"), ":material/groups:"),
)
# Looked up once: checking the disk for every link on every rerun is dear under load.
MENU: tuple[tuple[str, str, str], ...] = tuple(p for p in PAGES if (ROOT / p[0]).exists())


@functools.cache
def page_source(source: str) -> tuple[str, str]:
    """A page file -> (its path relative to the app root, its text); read once per process."""
    path = Path(source).resolve()
    return path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def page_url(path: str) -> str:
    """The URL path of a page file: app.py is "/", pages/NAME.py is "/NAME"."""
    return "/" if path == "app.py" else "/" + Path(path).stem


def page_link(path: str, label: str, icon: str, query: dict[str, str] | None = None) -> None:
    """A link to another page; a plain link where the page registry is not the app's.

    (AppTest running one page file alone knows no other pages.) The session's language goes along.
    """
    query = with_language({} if query is None else {k: url_value(k, v) for k, v in query.items()}) or None
    try:
        st.page_link(path, label=label, icon=icon, query_params=query)
    except StreamlitPageNotFoundError:
        url = page_url(path)
        if query:
            url += "?" + urlencode(query)
        st.markdown(f"[{label}]({url})")


def presenting() -> bool:
    """Presenter mode: ``?present=1`` in the link, or the sidebar toggle."""
    if keys.PRESENTING not in st.session_state:
        value, _ = PRESENT.parse(st.query_params.get_all(PRESENT.name) or None)
        st.session_state[keys.PRESENTING] = value == "1"
    return bool(st.session_state[keys.PRESENTING])


def absolute(url: str) -> str:
    """A path of this app as a full address, at the host the browser reached (as is in AppTest)."""
    try:
        parts = urlsplit(st.context.url)
    except (AttributeError, ValueError, TypeError):
        return url  # no browser (AppTest): a path relative to the app
    if not parts.scheme:
        return url
    return f"{parts.scheme}://{parts.netloc}{url}"


def with_language(params: dict[str, str]) -> dict[str, str]:
    """``params`` and the session's ``lang``, where a link carries it (``language.in_links``)."""
    lang = in_links()
    return params if lang is None else {**params, LANG.name: lang}


def share_link(path: str, params: dict[str, str]) -> str:
    """The link that reproduces this run: the page's URL with its non-default settings, the
    language and presenter mode."""
    if presenting():
        params = {**params, PRESENT.name: "1"}
    params = with_language({k: url_value(k, v) for k, v in params.items()})
    return absolute(page_url(path)) + ("?" + urlencode(params) if params else "")


def inspector_link(node_id: str, settings: dict[str, str]) -> str:
    """The Debugging page's inspector for one node, with the run's settings."""
    return page_url("pages/debugging.py") + "?" + urlencode(with_language({**settings, "node": node_id}))
