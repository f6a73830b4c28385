"""Words in the reader's language: gettext catalogs looked up per call, never per process.

Every session is a thread of one server process, so no language is ever installed
process-wide. The language of the words being made now is a ``contextvars.ContextVar``:
the ui sets it at the start of each script run and of each fragment's run
(``stockdemo.ui.language``), a socket route sets it around each move (``speaking``), and
anything else (a notebook, the command line, a test) reads English unless it says
otherwise. Values shared by every session (``stockdemo/ui/caches.py``) never hold words
in one language: code that may run inside such a cache makes ``later(...)`` Messages,
which become words when shown, in the language of whoever shows them.

The catalogs are one per area of the code (``stockdemo/i18n/catalogs.py``, ``DOMAINS``), so
several people translate at once without editing one file; for a language they are merged
into one table when first used. docs/translating.md says how to wrap a string.
"""

from __future__ import annotations

import functools
import gettext
from dataclasses import dataclass
from pathlib import Path

from babel.support import Translations

from stockdemo.i18n.numbers import number
from stockdemo.i18n.spoken import ENGLISH, LANGUAGES, NAMES, TAGS, language, set_language, speaking

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"


@functools.cache
def catalog(lang: str) -> gettext.NullTranslations:
    """Every area's compiled catalog for ``lang``, merged into one table, read once per process.

    English is the msgids themselves. A language without a catalog falls back to English.
    """
    merged = Translations()
    for mo in sorted(LOCALE_DIR.glob(f"{lang}/LC_MESSAGES/*.mo")) if lang != ENGLISH else ():
        with mo.open("rb") as fp:
            part = Translations(fp, domain=mo.stem)
        if not merged._catalog:  # the first keeps its header: its plural rule is the language's
            merged = part
        else:
            merged.merge(part)
    return merged


@functools.cache
def in_every_language(message: str) -> frozenset[str]:
    """``message`` as each language says it: a link may carry any of them (a bound menu
    writes the label it shows into the address)."""
    return frozenset(catalog(lang).gettext(message) for lang in LANGUAGES)


def _filled(text: str, params: dict[str, object]) -> str:
    """``text``'s ``{named}`` placeholders filled: a number (int, float) written as the language
    writes numbers (pass a str for a number that is a name: a year, a seed), a Message said."""
    return text.format_map({k: number(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
                            else str(v) if isinstance(v, Message) else v for k, v in params.items()})


def tr(message: str, /, **params: object) -> str:
    """``message`` in the language spoken now, its ``{named}`` placeholders filled from ``params``
    (``_filled``). Without ``params`` nothing is filled: a message may hold braces as they are.
    """
    text = catalog(language()).gettext(message)
    return _filled(text, params) if params else text


def trn(singular: str, plural: str, n: int, /, **params: object) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the language spoken now (Spanish has two,
    Chinese one); ``{n}`` is ``n`` written for that language, unless ``params`` gives it."""
    return _filled(catalog(language()).ngettext(singular, plural, n), {"n": n, **params})


def trp(context: str, message: str, /, **params: object) -> str:
    """``tr`` for a message whose English is the same as another's but means something else
    (``context`` tells them apart: "Train" the button, "train" the part of the data)."""
    text = catalog(language()).pgettext(context, message)
    return _filled(text, params) if params else text


def N_(message: str) -> str:  # noqa: N802 (gettext's own name for it, which Babel finds)
    """Marks ``message`` for the catalogs where it is declared (a knob's label, a table of
    names), to be passed through ``tr`` where it is shown: it is not translated here."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:  # noqa: N802 (N_'s counterpart for a plural pair)
    """Marks a counted phrase where it is declared, to be said for a count elsewhere (``trn``, or
    the browser's plural rules: ``stockdemo.render.words``): it is not translated here."""
    return singular, plural


@dataclass(frozen=True)
class Message:
    """Words made where the reader is not known (a cache every session shares, a worker
    process): the msgid and its values, turned into text in the language spoken when it is
    shown (``str``, an f-string). Pickles, compares and hashes as its parts."""

    singular: str
    plural: str | None = None
    n: int | None = None
    params: tuple[tuple[str, object], ...] = ()

    def __str__(self) -> str:
        if self.plural is None:
            return tr(self.singular, **dict(self.params))
        return trn(self.singular, self.plural, self.n, **dict(self.params))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def english(self) -> str:
        """The message as its msgid reads, whatever is spoken (a log line, a test)."""
        return english(self)


def english(words: object) -> str:
    """``words`` (a Message, a deferred value, or text) said in English, whatever is spoken: what
    a layout measures, a download keeps, a key hashes."""
    if isinstance(words, str):
        return words
    if language() == ENGLISH:  # no language to swap: a DOT or a layout says dozens at a time
        return str(words)
    with speaking(ENGLISH):
        return str(words)


def later(message: str, /, **params: object) -> Message:
    """``tr`` deferred: the message is translated when shown (see ``Message``)."""
    return Message(message, params=tuple(params.items()))


def later_n(singular: str, plural: str, n: int, /, **params: object) -> Message:
    """``trn`` deferred."""
    return Message(singular, plural, n, tuple(params.items()))


__all__ = ["ENGLISH", "LANGUAGES", "NAMES", "TAGS", "Message", "N_", "Nn_", "catalog", "english",
           "in_every_language", "language", "later", "later_n", "number", "set_language", "speaking", "tr",
           "trn", "trp"]
