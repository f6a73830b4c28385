"""A learner's code in a link: compressed, bounded, and checked here, in one place.

    link = code_to_link(source)            # "eJxLy..." (URL-safe), or None if too long
    source, message = code_from_link(link) # never raises: (code or None, what went wrong)

A teacher hands an edit to a class as a link (``?code=...``); class mode carries the same
text to followers. The text is zlib at its best level, then URL-safe base64 without
padding. What comes back from a link is untrusted: its length is bounded before and after
decompressing (no zip bomb), and it must be UTF-8 text.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from stockdemo.config import CODE
from stockdemo.i18n import tr
from stockdemo.sandbox.limits import Limits

MAX_CODE_CHARS = Limits.code_chars  # the sandbox's own bound on the code's length
MAX_LINK_CHARS = CODE.max_len
EMPTY = "0"  # an empty editor: not base64 of anything, so it cannot be mistaken


def code_to_link(source: str) -> str | None:
    """``source`` as a link's value; None when the code or its link would be too long."""
    if len(source) > MAX_CODE_CHARS:
        return None
    packed = base64.urlsafe_b64encode(zlib.compress(source.encode("utf-8"), 9)).decode("ascii")
    packed = packed.rstrip("=") if source else EMPTY
    return packed if len(packed) <= MAX_LINK_CHARS else None


def code_from_link(raw: object) -> tuple[str | None, str | None]:
    """A link's value -> (the code, None), or (None, a message saying why not, in the language
    spoken now). Never raises."""
    if not isinstance(raw, str) or not raw:
        return None, None
    if raw == EMPTY:
        return "", None
    if len(raw) > MAX_LINK_CHARS:
        return None, _too_long(MAX_LINK_CHARS)
    try:
        packed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        inflate = zlib.decompressobj()
        data = inflate.decompress(packed, MAX_CODE_CHARS * 4 + 1)
        if inflate.unconsumed_tail or len(data) > MAX_CODE_CHARS * 4:
            return None, _too_long(MAX_CODE_CHARS)
        if not inflate.eof:
            raise ValueError("truncated")
        source = data.decode("utf-8")
    except (binascii.Error, ValueError, zlib.error, UnicodeDecodeError):
        return None, tr("The link's code could not be read (cut short or changed?): the seed is shown.")
    if len(source) > MAX_CODE_CHARS:
        return None, _too_long(MAX_CODE_CHARS)
    return source, None


def _too_long(limit: int) -> str:
    return tr("The link's code is longer than {limit} characters: the seed is shown.", limit=limit)
