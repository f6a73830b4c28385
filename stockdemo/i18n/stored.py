"""Words kept where readers of every language read them (the class store): a Message as plain
data, its msgid and values, said when read, in the reader's language; never a sentence.

    text = json.dumps(to_data(verdict.sentence))      # a Message, or text that is no language
    str(from_data(json.loads(text)))                  # in the language spoken now

A value inside may be a Message, a number or list written when said (``deferred``), or plain
JSON (text that is no language: an op's name, code). Reading never raises: what it cannot
read comes back as text, so a record written by hand or by an older version still shows.
"""

from __future__ import annotations

from stockdemo.i18n import Message
from stockdemo.i18n.deferred import Listing, Number

MAX_DEPTH = 8  # a composed check's sentence holds its parts' Messages, each its own


def to_data(words: object) -> object:
    """A Message (or a value inside one) -> JSON data that ``from_data`` reads back."""
    if isinstance(words, Message):
        return {"m": words.singular, "p": words.plural, "n": words.n,
                "v": {k: to_data(v) for k, v in words.params}}
    if isinstance(words, Listing):
        return {"list": [to_data(item) for item in words.items], "semicolons": words.semicolons}
    if isinstance(words, Number):
        return {"number": words.value, "digits": words.digits, "significant": words.significant}
    if words is None or isinstance(words, (bool, int, float, str)):
        return words
    return str(words)


def from_data(data: object, depth: int = 0) -> object:
    """``to_data``'s data -> the Message (or value) again; text for anything else. Never raises."""
    if not isinstance(data, dict):
        return data if data is None or isinstance(data, (bool, int, float, str)) else str(data)
    if depth > MAX_DEPTH:
        return ""
    try:
        if "m" in data:
            params = tuple((str(k), from_data(v, depth + 1)) for k, v in dict(data.get("v") or {}).items())
            plural = data.get("p")
            return Message(str(data["m"]), None if plural is None else str(plural),
                           None if plural is None else int(data["n"]), params)
        if "list" in data:
            items = tuple(from_data(i, depth + 1) for i in list(data["list"]))
            return Listing(items, bool(data.get("semicolons")))
        if "number" in data:
            digits = data.get("digits")
            return Number(float(data["number"]), None if digits is None else int(digits),
                          bool(data.get("significant")))
    except (TypeError, ValueError):
        pass
    return str(data)
