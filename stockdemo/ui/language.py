"""This session's language: decided at the start of every script run, and every fragment's run.

First visit: the link's ``?lang=`` (checked in ``stockdemo.config``), else the browser's
(``st.context.locale``), else English; then the sidebar's picker. It is kept in the
session, never in the process (every session is a thread of one process), and set for
the run with ``i18n.set_language``, which the core's words read. Links carry it
(``in_links``) whenever it is not what the reader's browser would pick by itself.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

import streamlit as st

from stockdemo import i18n
from stockdemo.config import LANG, PAGE_KNOBS, ChoiceKnob
from stockdemo.i18n.tags import language_of, parse_lang
from stockdemo.ui import keys
from stockdemo.ui.assets import component_js

# Every menu a page draws for a knob (keyed by the knob's name; each shows its choices' labels).
_MENUS = tuple({k.name: k for knobs in PAGE_KNOBS.values() for k in knobs if isinstance(k, ChoiceKnob)})
# The page's <html lang>, which Streamlit leaves at "en" (frontend/graph_view/src/html_lang.js).
_HTML_LANG = st.components.v2.component("stockdemo_html_lang", html="<span hidden></span>",
                                        js=component_js("html_lang"))


def browser_language() -> str:
    """The language the reader's browser asks for, if the app speaks it; else English."""
    return language_of(st.context.locale) or i18n.ENGLISH


def session_language() -> str:
    """Decide this session's language for this run and speak it (``i18n.set_language``) -> it.

    A ``?lang=`` the session has not taken yet (a first visit, a link followed) wins; one that
    names no language is said once (``language_message``) and the language stays.
    """
    raw = st.query_params.get_all(LANG.name)
    if raw and raw != st.session_state.get(keys.LANGUAGE_LINK):
        st.session_state[keys.LANGUAGE_LINK] = raw
        lang, message = parse_lang(raw)
        if lang is not None:
            if keys.LANGUAGE in st.session_state and lang != st.session_state[keys.LANGUAGE]:
                relabel_menus()
            st.session_state[keys.LANGUAGE] = lang
        st.session_state[keys.LANGUAGE_MESSAGE] = (raw[-1], lang) if message else None
    if keys.LANGUAGE not in st.session_state:
        st.session_state[keys.LANGUAGE] = browser_language()
    lang = st.session_state[keys.LANGUAGE]
    i18n.set_language(lang)
    return lang


def speak_session() -> None:
    """Speak the language this session last decided (a fragment's run: the page's was decided)."""
    i18n.set_language(st.session_state.get(keys.LANGUAGE, i18n.ENGLISH))


def fragment(fn: Callable | None = None, **options):
    """``st.fragment`` whose runs speak the session's language: a fragment's rerun runs
    in a thread of its own, without the page's start. Pages use it as ``@ui.fragment``."""
    def wrap(body: Callable) -> Callable:
        @functools.wraps(body)
        def speaking(*args, **kwargs):
            speak_session()
            return body(*args, **kwargs)
        return st.fragment(speaking, **options)
    return wrap if fn is None else wrap(fn)


def in_links() -> str | None:
    """The ``lang`` every link this session makes carries: its language, unless that is what
    the reader's browser picks by itself (then the reader's own browser decides); else None."""
    lang = st.session_state.get(keys.LANGUAGE, i18n.language())
    return None if lang == browser_language() else lang


def language_message() -> str | None:
    """Why the link's ``?lang=`` was not taken, in the session's language; None when it was."""
    said = st.session_state.get(keys.LANGUAGE_MESSAGE)
    return None if said is None else parse_lang(said[0])[1]


def language_to_url() -> None:
    """The address bar carries the language as links do (``in_links``)."""
    lang = in_links()
    if st.query_params.get(LANG.name) != lang:
        if lang is None:
            st.query_params.pop(LANG.name, None)
        else:
            st.query_params[LANG.name] = lang
        st.session_state[keys.LANGUAGE_LINK] = st.query_params.get_all(LANG.name)


def html_lang(lang: str) -> None:
    """Set the page's ``<html lang>`` to ``lang`` (WCAG 3.1.1: screen readers read Chinese as Chinese)."""
    _HTML_LANG(data=json.dumps({"lang": i18n.TAGS[lang]}), key="html_lang", height=0)


def language_picker() -> None:
    """The sidebar's menu of languages, each named in its own language (English, 中文, Español)."""
    if st.session_state.get(keys.LANGUAGE_PICKER) != st.session_state[keys.LANGUAGE]:
        st.session_state[keys.LANGUAGE_PICKER] = st.session_state[keys.LANGUAGE]
    st.selectbox(i18n.tr(LANG.label), i18n.LANGUAGES, key=keys.LANGUAGE_PICKER, format_func=i18n.NAMES.get,
                 help=i18n.tr(LANG.help), on_change=_picked)


def _picked() -> None:
    st.session_state[keys.LANGUAGE] = st.session_state[keys.LANGUAGE_PICKER]
    language_to_url()
    relabel_menus()


def relabel_menus() -> None:
    """Before a run in a new language: each knob's menu is sent its value again, so the browser
    shows (and writes into the address) the new language's label. Left alone, the browser keeps
    the old label and sends it back with the next move of any control; the new menu offers no such
    label, and Streamlit would put that menu back to its default."""
    for name in _MENUS:
        if name in st.session_state:
            st.session_state[name] = st.session_state[name]
