"""A lesson in a link (``?lesson=...``): compressed and bounded as a code link is
(``stockdemo.code.link``). What comes back is untrusted text: ``parse_lesson`` reads it next.

    link = lesson_to_link(lesson.text)      # None when too long for a link
    text, message = lesson_from_link(raw)   # never raises
    lesson, message = open_lesson(raw)      # a shipped lesson's name, or a link: parsed, never raises
"""

from __future__ import annotations

from functools import lru_cache

from stockdemo.code.link import pack, unpack
from stockdemo.config import LESSON
from stockdemo.i18n import N_, tr
from stockdemo.lessons.files import shipped, shipped_lesson
from stockdemo.lessons.schema import MAX_BYTES, LessonError, parse_lesson
from stockdemo.lessons.steps import Lesson

MAX_LINK_CHARS = LESSON.max_len
MAX_OPENED = 32  # links whose lesson is kept parsed

WORDS: dict[str, str] = {
    "too long": N_("The link's lesson is longer than {limit} characters: the built-in lesson is shown."),
    "unreadable": N_("The link's lesson could not be read (cut short or changed?): the built-in lesson "
                     "is shown."),
    "refused": N_("The link's lesson was refused ({error}): the built-in lesson is shown."),
}


def lesson_to_link(text: str) -> str | None:
    """A lesson's text as a link's value; None when the lesson or its link would be too long."""
    return pack(text, MAX_BYTES, MAX_LINK_CHARS) if text else None


def lesson_from_link(raw: object) -> tuple[str | None, str | None]:
    """A link's value -> (the lesson's text, None), or (None, why not). Never raises."""
    text, message = unpack(raw, MAX_BYTES, MAX_LINK_CHARS, WORDS)
    return (text or None), message


def open_lesson(raw: str) -> tuple[Lesson | None, str | None]:
    """A link's ``?lesson=``: a shipped lesson's name (``transformer-block``), or a lesson's text
    as ``lesson_to_link`` packs it -> (the lesson, None) or (None, why not, in the language spoken
    now). Never raises."""
    if isinstance(raw, str) and raw in shipped():
        return shipped_lesson(raw), None
    text, message = lesson_from_link(raw)
    if text is None:
        return None, message
    lesson, error = _parsed(text)
    if lesson is not None:
        return lesson, None
    refused = WORDS["refused"]
    return None, tr(refused, error=error.said())


@lru_cache(maxsize=MAX_OPENED)
def _parsed(text: str) -> tuple[Lesson | None, LessonError | None]:
    """A lesson's text parsed once for every session (a lesson is frozen: read it, never change
    it) -> (the lesson, None) or (None, the parser's reason). No words of a reader's language are
    kept here: they are said by ``open_lesson`` on each call."""
    try:
        return parse_lesson(text), None
    except LessonError as err:
        return None, err
