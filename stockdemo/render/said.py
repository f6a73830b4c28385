"""A JSON text made once for every reader, its words said for each: a picture's part of the payload.

A picture is cached for every session, so the words inside it (a caption, a frame's label, a
box's "input x", what a rolled box stands for) are Messages (``stockdemo.i18n.later``), not
text in one language. ``Said.of(value)`` encodes ``value`` once with a hole where each such
word is; ``text()`` fills the holes in the language spoken now. The layout is not redone and
the JSON not encoded again: a reader costs one catalog lookup per distinct word, once per
language (kept), then one join.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from stockdemo.i18n import Message, language
from stockdemo.i18n.deferred import Day, Lines, Listing, Number

# What is said when shown (``stockdemo.i18n``, ``stockdemo.i18n.deferred``): a hole in the text.
WORDS = (Message, Lines, Listing, Number, Day)


@dataclass(frozen=True, eq=False)
class Said:
    """JSON text with holes: ``pieces`` around them, ``holes`` (each an index into ``words``)."""

    pieces: tuple[str, ...]
    holes: tuple[int, ...]
    words: tuple[object, ...]
    _by_language: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, value: Any) -> Said:
        """``value`` as compact JSON, each word in it (``WORDS``, anywhere) left as a hole."""
        words: dict[object, int] = {}
        # A mark no text of the value can hold: a learner's code and names are in it too.
        mark = secrets.token_hex(8)

        def hole(word: object) -> str:
            if not isinstance(word, WORDS):
                raise TypeError(f"{type(word).__name__} is not JSON")
            return f"{mark}{words.setdefault(word, len(words))}{mark}"

        first, *rest = json.dumps(value, separators=(",", ":"), default=hole).split(f'"{mark}')
        pieces, holes = [first], []
        for part in rest:  # each: the word's index, the mark, the text up to the next hole
            index, _, after = part.partition(f'{mark}"')
            holes.append(int(index))
            pieces.append(after)
        return cls(tuple(pieces), tuple(holes), tuple(words))

    def text(self) -> str:
        """The JSON text, its words in the language spoken now."""
        said = self._by_language.get(language())
        if said is None:
            said = self._by_language[language()] = tuple(json.dumps(str(w)) for w in self.words)
        out = [self.pieces[0]]
        for k, piece in zip(self.holes, self.pieces[1:], strict=True):
            out += (said[k], piece)
        return "".join(out)

    @property
    def size(self) -> int:
        """About how many bytes it holds (a cache's budget)."""
        return sum(map(len, self.pieces))
