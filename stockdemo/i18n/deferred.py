"""Values written when they are shown, in the reader's language: a number, a date, a list of words.

For a ``later(...)`` Message's placeholders where the value is made inside a cache every
session shares (a Lab report, a figure): "{size} KB" is "14.9 KB" in English and "14,9 KB"
in Spanish, "A, B and C" is "A、B和C" in Chinese. A Message fills a placeholder with
``format``, which calls ``__str__`` here when the Message itself is said.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from babel.dates import format_skeleton
from babel.lists import format_list

from stockdemo.i18n.numbers import _locale, day, number, significant
from stockdemo.i18n.spoken import language


@dataclass(frozen=True)
class Number:
    """A number written when shown: ``digits`` decimals (None: as many as it has, up to 3), or
    ``digits`` significant ones when ``significant``."""

    value: float
    digits: int | None = None
    significant: bool = False

    def __str__(self) -> str:
        if self.significant:
            digits = 3 if self.digits is None else self.digits
            # rounded first: Babel's powers-of-ten pattern alone keeps every digit at 1 significant
            return significant(float(f"{self.value:.{digits}g}"), digits)
        return number(self.value, self.digits)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


@dataclass(frozen=True)
class Day:
    """A date (ISO text) written when shown: ``day``'s short form, or by a CLDR ``skeleton``
    ("MMMd": "Jan 3", "3 ene", "1月3日")."""

    iso: str
    skeleton: str | None = None

    def __str__(self) -> str:
        if self.skeleton is None:
            return day(self.iso)
        date = dt.date.fromisoformat(self.iso[:10])
        return format_skeleton(self.skeleton, date, locale=_locale(language()))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


# Items that hold lists themselves are parted by semicolons, as each language writes them.
SEMICOLONS = {"zh_CN": "；"}
# The app's English lists end "B and C", as its English did before it spoke other languages.
LIST_LOCALE = {"en": "en_GB"}


@dataclass(frozen=True)
class Listing:
    """Words joined as the language joins a list ("A, B and C", "A、B和C", "A, B y C"), or by
    semicolons (``semicolons``: items that hold lists); each item is said when the list is (a
    Message, or text that is no language: a name, code)."""

    items: tuple[object, ...]
    semicolons: bool = False

    def __str__(self) -> str:
        said = [str(item) for item in self.items]
        if self.semicolons:
            return SEMICOLONS.get(language(), "; ").join(said)
        return format_list(said, "standard", _locale(LIST_LOCALE.get(language(), language())))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


@dataclass(frozen=True)
class Lines:
    """A box's text as lines (a label, then a shape), each said when the box is."""

    items: tuple[object, ...]

    def __str__(self) -> str:
        return "\n".join(map(str, self.items))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


@dataclass(frozen=True)
class Sentences:
    """Whole sentences one after another, each said when they are: "A. B." in English and
    Spanish, "A。B。" in Chinese (no space between sentences)."""

    items: tuple[object, ...]

    def __str__(self) -> str:
        said = [text for text in map(str, self.items) if text]
        return ("" if language() == "zh_CN" else " ").join(said)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def later_sentences(*items: object) -> Sentences:
    """``items`` (Messages, or text) said one after another (``Sentences``)."""
    return Sentences(items)


def later_number(value: float, digits: int | None = None) -> Number:
    """``number(value, digits)``, written when shown."""
    return Number(float(value), digits)


def later_significant(value: float, digits: int = 3) -> Number:
    """``significant(value, digits)``, written when shown."""
    return Number(float(value), digits, significant=True)


def later_day(iso: str, skeleton: str | None = None) -> Day:
    """A date, written when shown (``Day``)."""
    return Day(iso, skeleton)


def later_lines(*items: object) -> Lines | object:
    """``items`` one under the other, said when shown; a single item as it is."""
    return items[0] if len(items) == 1 else Lines(items)


def later_list(items: Iterable[object], semicolons: bool = False) -> Listing:
    """``items`` as one list in words, written when shown (``Listing``)."""
    return Listing(tuple(items), semicolons)
