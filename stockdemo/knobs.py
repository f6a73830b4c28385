"""The knob types: an integer, a choice or a short text, each with its own "never raises" parser.

A knob's ``name`` is also its key in a URL. ``parse`` takes any untrusted value (a
query string, a list from a repeated key, bytes, anything) and returns a valid value
and, where it changed what was given, one plain-language message. ``knob_fields``
turns a tuple of knobs into a frozen dataclass with one field each (``KnobConfig``):
the declarations in stockdemo/config.py are the only place a field is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from stockdemo.i18n import in_every_language, tr
from stockdemo.i18n import number as written

# Longest text accepted for one query value; longer values are not even parsed.
MAX_RAW_LEN = 64


@dataclass(frozen=True)
class IntKnob:
    """An integer control with inclusive bounds. ``name`` is also its key in a URL."""

    name: str
    label: str
    default: int
    low: int
    high: int
    step: int
    help: str
    type = int

    def bounds(self) -> str:
        """The values it takes, in words: '1..200; default 5'."""
        return f"{self.low}..{self.high}; default {self.default}"

    def variant(self, name: str, **changes: object) -> IntKnob:
        """The same control under another URL key, e.g. with other bounds or words."""
        return dataclasses.replace(self, name=name, **changes)

    def parse(self, raw: object) -> tuple[int, str | None]:
        """Untrusted value -> (valid value, message or None). Never raises."""
        text = query_text(raw)
        if text is None:
            return self.default, None
        text = text.strip()
        if len(text) > MAX_RAW_LEN:
            return self.default, tr("{knob}: the value is too long to be a number; using the default "
                                    "{default}.", knob=tr(self.label), default=self.default)
        try:
            number = float(text)
        except ValueError:
            return self.default, tr("{knob}: {value} is not a number; using the default {default}.",
                                    knob=tr(self.label), value=quoted(text), default=self.default)
        if number != number or number in (float("inf"), float("-inf")):
            return self.default, tr("{knob}: {value} is not a finite number; using the default "
                                    "{default}.", knob=tr(self.label), value=quoted(text),
                                    default=self.default)
        value = round(number)
        message = None
        if value != number:
            message = tr("{knob}: {value} is not a whole number; rounded to {rounded}.",
                         knob=tr(self.label), value=quoted(text), rounded=value)
        if value < self.low or value > self.high:
            clamped = min(max(value, self.low), self.high)
            message = tr("{knob}: {value} is outside {low}–{high}; using {clamped}.",
                         knob=tr(self.label), value=quoted(text), low=self.low, high=self.high,
                         clamped=clamped)
            value = clamped
        return int(value), message

    def parse_list(self, raw: object, fallback: tuple[int, ...], most: int = 8) -> tuple[int, ...]:
        """Untrusted values separated by commas -> them and the default, sorted, if there are at
        most ``most`` and every one is valid; else ``fallback``. Never raises."""
        text = query_text(raw) or ""
        parsed = [self.parse(entry) for entry in text.split(",") if entry.strip()]
        if not parsed or len(parsed) > most or any(message for _, message in parsed):
            return fallback
        return tuple(sorted({self.default, *(value for value, _ in parsed)}))


@dataclass(frozen=True)
class ChoiceKnob:
    """A control that takes one of a fixed set of strings. ``name`` is also its key in a URL.

    ``labels``: what a menu shows for each choice, where that differs from the choice.
    """

    name: str
    label: str
    default: str
    choices: tuple[str, ...]
    help: str
    labels: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    type = str

    def bounds(self) -> str:
        return f"one of {', '.join(self.choices)}; default {self.default}"

    def variant(self, name: str, choices: tuple[str, ...], **changes: object) -> ChoiceKnob:
        """The same menu under another URL key, offering only ``choices`` (with their labels)."""
        labels = {c: self.labels[c] for c in choices if c in self.labels}
        return dataclasses.replace(self, name=name, choices=choices,
                                   **{"labels": labels, **changes})

    def show(self, choice: str) -> str:
        """What the menu shows for ``choice``, in the language spoken now (and what a bound
        menu writes into the URL)."""
        label = self.labels.get(choice)
        return choice if label is None else tr(label)

    def parse(self, raw: object) -> tuple[str, str | None]:
        """Untrusted value -> (valid choice, message or None). Never raises."""
        text = query_text(raw)
        if text is None:
            return self.default, None
        value = " ".join(text.split()).lower()
        if value in self.choices:
            return value, None
        # A link copied from the address bar carries the label the menu shows
        # (Streamlit binds a select box by its displayed text): cell=nn.GRU.
        # In any language: a link made in one may be opened in another.
        for key, label in self.labels.items():
            if key in self.choices and value in {said.lower() for said in in_every_language(label)}:
                return key, None
        return self.default, tr("{knob}: {value} is not one of {choices}; using {default}.",
                                knob=tr(self.label), value=quoted(text[:MAX_RAW_LEN]),
                                choices=", ".join(self.choices), default=self.default)


@dataclass(frozen=True)
class TextKnob:
    """A short free-text key in a URL (e.g. a node id), checked against a run by its page."""

    name: str
    label: str
    help: str
    max_len: int = 120
    default: str = ""

    def parse(self, raw: object) -> tuple[str, str | None]:
        """Untrusted value -> (stripped text, None), or (the default, why) when it is longer
        than ``max_len``: cut, it would be another value. Never raises.

        Whether the text names anything is for its page to say (it knows the run).
        """
        text = query_text(raw)
        if text is None or not text.strip():
            return self.default, None
        if len(text.strip()) > self.max_len:
            return self.default, tr("{knob}: the link's value is longer than {count} characters, so it "
                                    "was not used.", knob=tr(self.label), count=written(self.max_len))
        return text.strip(), None


Knob = IntKnob | ChoiceKnob


def knob_fields(knobs: tuple[Knob, ...]) -> Callable[[type], type]:
    """Class decorator: a frozen dataclass with one field per knob, in order, with its default.

    The knobs are the only place the fields are written; ``cls.KNOBS`` keeps them.
    """
    def make(cls: type) -> type:
        cls.__annotations__ = {k.name: k.type.__name__ for k in knobs}
        for knob in knobs:
            setattr(cls, knob.name, knob.default)
        cls.KNOBS = knobs
        return dataclass(frozen=True)(cls)
    return make


class KnobConfig:
    """What every config of knobs can do: check itself, read and write URL values."""

    KNOBS: tuple[Knob, ...] = ()

    def __post_init__(self) -> None:
        for knob in self.KNOBS:
            value = getattr(self, knob.name)
            if isinstance(knob, IntKnob):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"{knob.name} must be an int, got {value!r}")
                if not knob.low <= value <= knob.high:
                    raise ValueError(
                        f"{knob.name}={value} is outside {knob.low}..{knob.high}"
                    )
            elif value not in knob.choices:
                raise ValueError(f"{knob.name}={value!r} is not one of {knob.choices}")

    @classmethod
    def from_params(cls, params: Mapping[str, object]):
        """Untrusted strings (URL query values) -> (valid config, messages).

        Missing keys take their default silently; anything rejected or clamped
        gets one plain-language message. Unknown keys are ignored here (other
        pages own them). Never raises on bad text.
        """
        values, messages = parse_knobs(cls.KNOBS, params)
        return cls(**values), messages

    def to_params(self) -> dict[str, str]:
        """Query parameters that differ from the defaults (for a shareable link)."""
        return {k.name: str(getattr(self, k.name)) for k in self.KNOBS
                if getattr(self, k.name) != k.default}

    def replace(self, **changes: object):
        return dataclasses.replace(self, **changes)


def parse_knobs(knobs: tuple[Knob, ...], params: object) -> tuple[dict[str, object], list[str]]:
    """Untrusted values for these knobs -> (valid values by name, messages). Never raises.

    ``params`` is any mapping of name -> string or list of strings (repeated
    key); anything else counts as empty.
    """
    get = params.get if hasattr(params, "get") else (lambda _name: None)
    values: dict[str, object] = {}
    messages: list[str] = []
    for knob in knobs:
        values[knob.name], message = knob.parse(get(knob.name))
        if message:
            messages.append(message)
    return values, messages


def query_text(raw: object) -> str | None:
    """A query value may arrive as a string, a list (repeated key) or anything."""
    if raw is None:
        return None
    if isinstance(raw, (list, tuple)):
        return query_text(raw[-1]) if raw else None
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")
    return str(raw)


def quoted(text: str) -> str:
    """Untrusted text as a message quotes it: short, in quotes."""
    shown = text if len(text) <= 24 else text[:21] + "..."
    return repr(shown)
