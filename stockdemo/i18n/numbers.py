"""Numbers and dates as the reader's language writes them (Babel's CLDR data):
1,234.5 in English and Chinese, 1.234,5 in Spanish; 52 % in Spanish; 1 mar 2013, 2013年3月1日.

Patterns are parsed once per process (a parse costs more than the formatting itself).
"""

from __future__ import annotations

import datetime as dt
import functools
import math

from babel import Locale
from babel.dates import format_date
from babel.numbers import NumberPattern, parse_pattern

from stockdemo.i18n.spoken import language


@functools.cache
def _locale(lang: str) -> Locale:
    return Locale.parse(lang)


@functools.cache
def _pattern(text: str) -> NumberPattern:
    return parse_pattern(text)


def _fraction(digits: int | None) -> str:
    return "." + "#" * 3 if digits is None else ("." + "0" * digits if digits else "")


def number(value: float, digits: int | None = None) -> str:
    """``value`` with the language's grouping and decimal mark: ``digits`` decimals, or as many
    as it has (up to 3) when None. 1234.5 -> '1,234.5' / '1.234,5'; NaN and ∞ as the language writes them."""
    return _pattern("#,##0" + _fraction(digits)).apply(value, _locale(language()))


def significant(value: float, digits: int = 3) -> str:
    """``f"{value:.3g}"`` in the language: ``digits`` significant digits, and powers of ten for
    the very large or small (0.000123 -> '1.23E-4' / '1,23E-4')."""
    if value == 0 or not math.isfinite(value) or 1e-3 <= abs(value) < 1e6:
        return _pattern("@" * digits if value else "0").apply(value, _locale(language()))
    return _pattern("0." + "#" * (digits - 1) + "E0").apply(value, _locale(language()))


def percent(share: float, digits: int = 0) -> str:
    """A share (0.523) as the language writes a percentage: '52%', '52 %', '52.3%'."""
    locale = _locale(language())
    own = locale.percent_formats[None].pattern  # its sign and space kept, the fraction after its last 0
    last = own.rindex("0")
    return _pattern(own[:last + 1] + _fraction(digits) + own[last + 1:]).apply(share, locale)


def day(value: dt.date | str) -> str:
    """A date as the language writes it, short: 'Mar 1, 2013', '1 mar 2013', '2013年3月1日'."""
    if isinstance(value, str):
        value = dt.date.fromisoformat(value[:10])
    return format_date(value, "medium", locale=_locale(language()))
