"""Words kept where readers of every language read them (the class store): a Message as plain
data, its msgid and values, said when read, in the reader's language; never a sentence.

    text = json.dumps(to_data(verdict.sentence))      # a Message, or text that is no language
    str(from_data(json.loads(text)))                  # in the language spoken now

A value inside may be a Message, any of ``deferred``'s values written when said (a number, a
date, a list, sentences), a tuple of them, or plain JSON (text that is no language: an op's
name, code). Reading never raises: what it cannot read comes back as text, so a record written
by hand or by an older version still shows.
"""

from __future__ import annotations

import dataclasses

from stockdemo.i18n import Message, deferred

MAX_DEPTH = 8  # a composed check's sentence holds its parts' Messages, each its own


def said_later(words: object) -> bool:
    """Whether ``words`` are said when shown (a Message, or a value of ``deferred``): what a store
    keeps whole, as data, rather than as text in one language."""
    return isinstance(words, Message) or (dataclasses.is_dataclass(words) and not isinstance(words, type)
                                          and type(words).__module__ == deferred.__name__)


def bounded(words: object, limit: int) -> object:
    """Words as a store keeps them: said-later words whole (the server made them), anything
    else as text of at most ``limit`` characters (None: "")."""
    if said_later(words):
        return words
    return "" if words is None else str(words)[:limit]


def to_data(words: object) -> object:
    """A Message (or a value inside one) -> JSON data that ``from_data`` reads back."""
    if isinstance(words, Message):
        return {"m": words.singular, "p": words.plural, "n": words.n,
                "v": {k: to_data(v) for k, v in words.params}}
    if said_later(words):
        return {"deferred": type(words).__name__,
                **{f.name: to_data(getattr(words, f.name)) for f in dataclasses.fields(words)}}
    if isinstance(words, (tuple, list)):
        return [to_data(item) for item in words]
    if words is None or isinstance(words, (bool, int, float, str)):
        return words
    return str(words)


def from_data(data: object, depth: int = 0) -> object:
    """``to_data``'s data -> the Message (or value) again; text for anything else. Never raises."""
    if depth > MAX_DEPTH:
        return ""
    if isinstance(data, list):
        return tuple(from_data(item, depth + 1) for item in data)
    if not isinstance(data, dict):
        return data if data is None or isinstance(data, (bool, int, float, str)) else str(data)
    try:
        if "m" in data:
            params = tuple((str(k), from_data(v, depth + 1)) for k, v in dict(data.get("v") or {}).items())
            plural = data.get("p")
            return Message(str(data["m"]), None if plural is None else str(plural),
                           None if plural is None else int(data["n"]), params)
        kind = getattr(deferred, str(data.get("deferred")), None)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind) and kind.__module__ == deferred.__name__:
            return kind(**{f.name: from_data(data[f.name], depth + 1)
                           for f in dataclasses.fields(kind) if f.name in data})
    except (TypeError, ValueError):
        pass
    return str(data)
