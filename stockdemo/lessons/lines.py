"""Where a key sits in a lesson's TOML text: the line an error names.

``tomllib`` gives the line of a syntax error but not of a value it parsed, so a schema error
finds its key with a light scan of the text (``KeyLines``): table headers (``[[steps]]``,
``[steps.question]``) and assignments (``low = 0``, also inside inline tables), with string
literals and comments masked so that nothing inside them counts. A key path such as
``steps[2].question.low`` is followed region by region: the third ``[[steps]]``, then the
first ``question`` inside it, then the first ``low`` after that. A path it cannot follow to
the end gives the line of the deepest part it found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KEY = r'(?:[A-Za-z0-9_-]+|"\d+")'
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*(\[\[|\[)\s*({_DOTTED})\s*\]\]?")
_ASSIGN = re.compile(rf"(?:^|[{{,\[])\s*({_DOTTED})\s*=")
_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Found:
    line: int  # 1-based
    path: tuple[str, ...]  # the key's dotted path as written (a header's, or an assignment's)
    header: bool  # a [table] or [[array]] header: it opens a region, up to the next header
    array: bool  # a [[header]]: one more element of an array of tables


def _mask(line: str, strings: list[str], quote: str | None) -> tuple[str, str | None]:
    """``line`` with each string literal replaced by ``"<n>"`` (its text kept in ``strings``) and
    any comment cut; ``quote``: the multi-line string it starts inside, and the one it ends in."""
    out, i = [], 0
    while i < len(line):
        if quote is not None:
            end = line.find(quote, i)
            if end < 0:
                return "".join(out), quote
            i, quote = end + 3, None
            continue
        ch = line[i]
        if ch == "#":
            break
        if line.startswith(('"""', "'''"), i):
            quote, i = line[i:i + 3], i + 3
            out.append(f'"{len(strings)}"')
            strings.append("")
            continue
        if ch in "\"'":
            j = i + 1
            while j < len(line) and line[j] != ch:
                j += 2 if ch == '"' and line[j] == "\\" else 1
            strings.append(line[i + 1:j])
            out.append(f'"{len(strings) - 1}"')
            i = j + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out), quote


class KeyLines:
    """The key tokens of a TOML text, in order, and a path's line among them."""

    def __init__(self, text: str) -> None:
        self.found: list[Found] = []
        strings: list[str] = []
        quote = None
        for number, raw in enumerate(text.splitlines(), 1):
            line, quote = _mask(raw, strings, quote)
            header = _HEADER.match(line)
            if header and not _ASSIGN.match(line):
                path = self._path(header.group(2), strings)
                self.found.append(Found(number, path, True, header.group(1) == "[["))
                continue
            for match in _ASSIGN.finditer(line):
                self.found.append(Found(number, self._path(match.group(1), strings), False, False))

    @staticmethod
    def _path(dotted: str, strings: list[str]) -> tuple[str, ...]:
        parts = [p.strip() for p in dotted.split(".")]
        return tuple(strings[int(p[1:-1])] if p.startswith('"') else p for p in parts)

    def line_of(self, key: str) -> int:
        """The line of ``key`` (``"steps[2].question.low"``), or of the deepest part found (1 if none)."""
        parts = [name if name else int(index) for name, index in _PART.findall(key)]
        start, end, line, skip = 0, len(self.found), 1, 0
        for k, part in enumerate(parts):
            if isinstance(part, int):
                continue
            index = parts[k + 1] if k + 1 < len(parts) and isinstance(parts[k + 1], int) else None
            hits = [i for i in range(start, end) if part in self.found[i].path]  # q in q.low = 3
            arrays = [i for i in hits if self.found[i].array]
            if index is not None and arrays:
                pool, at, skip = arrays, index, 0
            else:
                pool, at, skip = hits, skip, index or 0  # an index into an inline array: count the next key
            if not pool:
                break
            hit = pool[min(at, len(pool) - 1)]
            start, line = hit, self.found[hit].line
            end = self._region_end(hit, end)
        return line

    def _region_end(self, hit: int, end: int) -> int:
        """Where what ``found[hit]`` opens ends: a header's region stops at the next header
        outside it; an assignment's stays its table's."""
        token = self.found[hit]
        if not token.header:
            return end
        for i in range(hit + 1, end):
            other = self.found[i]
            if other.header and (other.path[:len(token.path)] != token.path or other.path == token.path):
                return i
        return end
