"""Babel's extractor for lesson files (``lessons/*.toml``): the words a learner reads.

A lesson is TOML (``tomllib``); its learner-facing fields are plain strings, each
extracted as a msgid (a list of strings, such as a question's choices, gives one each).
Everything else (code, ids, measures, settings) stays as written.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from typing import BinaryIO

# The keys whose strings a learner or a teacher reads on the page (stockdemo/lessons/schema.py):
# the lesson's and each step's title, the lesson's about, a step's sentence and link, its
# question's text and choices, its answer's label and detail, a challenge's title and prompt.
# A challenge's start and answer are code; ids, pages, settings and measures are not words.
LEARNER_FIELDS = frozenset({"title", "about", "sentence", "link", "text", "choices", "label", "detail",
                            "prompt"})


def lesson_strings(data: object, key: str = "") -> Iterator[str]:
    """Every string under a learner-facing key of a parsed lesson, in file order (a question's
    choices are a table of id = words: its values are the words)."""
    if isinstance(data, dict):
        for k, value in data.items():
            yield from lesson_strings(value, key if key == "choices" else k)
    elif isinstance(data, list):
        for item in data:
            yield from lesson_strings(item, key)
    elif isinstance(data, str) and key in LEARNER_FIELDS and data.strip():
        yield data


def extract_lesson(fileobj: BinaryIO, keywords: object, comment_tags: object,
                   options: object) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extractor protocol: (line, function, message, comments) for each learner string.

    The line is where the string's first line stands in the file (TOML keeps no positions).
    """
    raw = fileobj.read().decode("utf-8")
    lines = raw.splitlines()
    for message in lesson_strings(tomllib.loads(raw)):
        first = message.splitlines()[0]
        lineno = next((i for i, line in enumerate(lines, 1) if first in line), 1)
        yield lineno, "", message, []
