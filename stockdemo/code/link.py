"""Text in a link: compressed, bounded, and checked here, in one place (a learner's code, a lesson).

    link = code_to_link(source)            # "eJxLy..." (URL-safe), or None if too long
    source, message = code_from_link(link) # never raises: (code or None, what went wrong)

A teacher hands an edit to a class as a link (``?code=...``); class mode carries the same
text to followers. The text is zlib at its best level, then URL-safe base64 without
padding. What comes back from a link is untrusted: its length is bounded before and after
decompressing (no zip bomb), and it must be UTF-8 text. ``pack`` and ``unpack`` do this
for any text with its own bounds and words (``stockdemo.lessons.link``: a lesson).
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Mapping

from stockdemo.config import CODE
from stockdemo.i18n import N_, tr
from stockdemo.sandbox.limits import Limits

MAX_CODE_CHARS = Limits.code_chars  # the sandbox's own bound on the code's length
MAX_LINK_CHARS = CODE.max_len
EMPTY = "0"  # an empty editor: not base64 of anything, so it cannot be mistaken

# What a page says of a link it could not use ({limit}: the bound passed), said by ``unpack``
# in the language spoken then.
CODE_WORDS: dict[str, str] = {
    "too long": N_("The link's code is longer than {limit} characters: the seed is shown."),
    "unreadable": N_("The link's code could not be read (cut short or changed?): the seed is shown."),
}


def pack(text: str, max_chars: int, max_link: int) -> str | None:
    """``text`` as a link's value; None when the text or its link would be too long."""
    if len(text) > max_chars:
        return None
    packed = base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
    packed = packed.rstrip("=") if text else EMPTY
    return packed if len(packed) <= max_link else None


def unpack(raw: object, max_chars: int, max_link: int, words: Mapping[str, str]
           ) -> tuple[str | None, str | None]:
    """A link's value -> (the text, None), or (None, a message from ``words``, in the language
    spoken now). Never raises."""
    if not isinstance(raw, str) or not raw:
        return None, None
    if raw == EMPTY:
        return "", None
    if len(raw) > max_link:
        return None, _said(words, "too long", limit=max_link)
    try:
        packed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        inflate = zlib.decompressobj()
        data = inflate.decompress(packed, max_chars * 4 + 1)
        if inflate.unconsumed_tail or len(data) > max_chars * 4:
            return None, _said(words, "too long", limit=max_chars)
        if not inflate.eof:
            raise ValueError("truncated")
        text = data.decode("utf-8")
    except (binascii.Error, ValueError, zlib.error, UnicodeDecodeError):
        return None, _said(words, "unreadable")
    if len(text) > max_chars:
        return None, _said(words, "too long", limit=max_chars)
    return text, None


def _said(words: Mapping[str, str], key: str, **params: object) -> str:
    """``words[key]`` in the language spoken now (a msgid held in a table: the catalogs find it
    where the table is declared, ``N_``)."""
    message = words[key]
    return tr(message, **params)


def code_to_link(source: str) -> str | None:
    """``source`` as a link's value; None when the code or its link would be too long."""
    return pack(source, MAX_CODE_CHARS, MAX_LINK_CHARS)


def code_from_link(raw: object) -> tuple[str | None, str | None]:
    """A link's value -> (the code, None), or (None, a message saying why not, in the language
    spoken now). Never raises."""
    return unpack(raw, MAX_CODE_CHARS, MAX_LINK_CHARS, CODE_WORDS)
