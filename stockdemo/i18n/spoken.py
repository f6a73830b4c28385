"""The language words are made in now: one ``ContextVar``, set per script run, never per process."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ENGLISH = "en"
# gettext's names (the folders under stockdemo/locale/); each shown in its own language.
LANGUAGES: tuple[str, ...] = (ENGLISH, "zh_CN", "es")
NAMES: dict[str, str] = {ENGLISH: "English", "zh_CN": "中文", "es": "Español"}
# The same languages as a browser and HTML name them (BCP 47): <html lang>, Intl in the browser.
TAGS: dict[str, str] = {ENGLISH: "en", "zh_CN": "zh-CN", "es": "es"}

_LANGUAGE: ContextVar[str] = ContextVar("stockdemo_language", default=ENGLISH)


def language() -> str:
    """The language words are made in now: this session's, in a script run the ui started."""
    return _LANGUAGE.get()


def set_language(lang: str) -> None:
    """Speak ``lang`` (one of LANGUAGES; anything else is English) in this context from now on.

    For the start of a run that owns its thread (a Streamlit script run); elsewhere use ``speaking``.
    """
    _LANGUAGE.set(lang if lang in LANGUAGES else ENGLISH)


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Words made inside the block are in ``lang``; the language before comes back after it."""
    token = _LANGUAGE.set(lang if lang in LANGUAGES else ENGLISH)
    try:
        yield
    finally:
        _LANGUAGE.reset(token)
