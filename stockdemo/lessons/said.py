"""A lesson's words in a reader's language: the one call that says them, for a page's reader or,
in a class of several languages, for each student (``said(words, lang)``).

A lesson file's own text (a title, a sentence, a question, a choice, a link, a prompt) is a
msgid of ``lessons.po`` when we ship the lesson (``stockdemo/i18n/lessons.py`` extracts it); a
teacher's own lesson is not in the catalogs and shows as typed. What the app makes of a lesson
(an answer's label, value and detail, a check's sentence and why it fails) is a ``Message``.
"""

from __future__ import annotations

from stockdemo.i18n import Message, speaking, tr


def said(words: str | Message | None, lang: str | None = None) -> str:
    """``words`` in ``lang`` (None: the language spoken now). Code and numbers a value holds
    stay as they are; "" and None are ""."""
    if lang is not None:
        with speaking(lang):
            return said(words)
    if isinstance(words, Message):
        return str(words)
    return tr(words) if words else ""  # gettext's "" is the catalog's header
