"""A language as a browser or a link names it (``zh-CN``, ``zh_Hans``, ``es-419``, ``中文``)
-> one the app speaks: the one place such untrusted text is read (``?lang=``, ``st.context.locale``,
``stockdemo.show(lang=...)``)."""

from __future__ import annotations

from stockdemo.config import LANG
from stockdemo.i18n import LANGUAGES, NAMES, tr
from stockdemo.knobs import MAX_RAW_LEN, query_text, quoted

# Chinese written in traditional characters is not Simplified Chinese: those readers get English.
_TRADITIONAL = ("hant", "tw", "hk", "mo")


def language_of(tag: object) -> str | None:
    """A language tag (``zh-CN``, ``zh_Hans``, ``es-419``, ``en``) or a language's own name
    -> one of LANGUAGES, or None for any other. Never raises."""
    text = query_text(tag)
    if text is None:
        return None
    words = text.strip().replace("_", "-").lower().split("-")
    name = {n.lower(): lang for lang, n in NAMES.items()}.get(text.strip().lower())
    if name is not None:
        return name
    if words[0] == "zh":
        return None if any(w in _TRADITIONAL for w in words[1:]) else "zh_CN"
    return words[0] if words[0] in LANGUAGES else None


def parse_lang(raw: object) -> tuple[str | None, str | None]:
    """Untrusted ``?lang=`` value -> (language, None), or (None, message) when it names no
    language the app speaks, or (None, None) when there is none. Never raises."""
    text = query_text(raw)
    if text is None or not text.strip():
        return None, None
    lang = language_of(text[:MAX_RAW_LEN])
    if lang is not None:
        return lang, None
    return None, tr("{knob}: {value} is not one of {choices}; the language stays as it was.",
                    knob=tr(LANG.label), value=quoted(text[:MAX_RAW_LEN]),
                    choices=", ".join(LANGUAGES))
