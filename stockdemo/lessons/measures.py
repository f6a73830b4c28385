"""Declared answers: a lesson names a measure and its parameters; our code computes it live.

A lesson never carries code that computes its answer. A step's ``[steps.answer]`` names a
measure of ``MEASURES`` (``measure = "nodes_gained"``), gives its parameters
(``from_seq_len = 5``), and may word the answer itself: ``label`` and ``detail`` are
templates whose named placeholders (``{from_nodes}``) are the measure's ``values``, filled
from the live run. Each measure reads one kind of settings (``reads``): a Playground run
(``RunConfig``), a training run (``TrainConfig``), the Lab's lengths experiment
(``LengthsConfig``), or code run in the sandbox (``CodeSettings``).

    spec = AnswerSpec("nodes_gained", (("from_seq_len", 5),))
    answer = spec.reveal(RunConfig(seq_len=6))   # Answer("Nodes gained, T 5 → 6", "+4", "T = 5: ...")
    answer.said().label                          # in the language spoken now (its words are Messages)

The measures themselves live in ``experiments`` (our own model's runs) and ``code_answers``
(code in the sandbox); each registers here with ``measure``.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from stockdemo.i18n import Message, later
from stockdemo.lessons.said import said

MAX_TEMPLATE = 600  # characters of a label or detail a lesson writes


@dataclass(frozen=True)
class Answer:
    """What the class sees on reveal: one figure, large, and a sentence of live numbers. Computed
    once for every session (``ui.cached_answer``), so its words are Messages, said where shown
    (``said``)."""

    label: Message | str  # what the figure is, e.g. "Nodes gained, T 5 → 6"
    value: Message | str  # e.g. "+4"; words are a Message ("No: the baseline wins")
    detail: Message | str

    def said(self, lang: str | None = None) -> Answer:
        """The answer in words of ``lang`` (None: the language spoken now)."""
        return Answer(said(self.label, lang), said(self.value, lang), said(self.detail, lang))


@dataclass(frozen=True)
class Reading:
    """A measure's live result: the figure, and the values its label and detail may name."""

    value: str | Message
    values: Mapping[str, object] = field(default_factory=dict)
    said: Message | None = None  # a whole detail that replaces the template (the run could not be made)


@dataclass(frozen=True)
class Param:
    """One parameter a measure takes from the lesson: a whole number within bounds, a choice,
    or an autograd op's name (checked as a check's are)."""

    kind: str  # "int", "choice" or "op"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    required: bool = False  # else, left out, the measure decides (e.g. one step shorter than the run)


@dataclass(frozen=True)
class Measure:
    name: str
    reads: type  # the settings it reads
    label: str  # the default label and detail, templates over ``values``
    detail: str
    values: tuple[str, ...]
    compute: Callable[..., Reading]  # (settings, **params) -> Reading
    params: Mapping[str, Param] = field(default_factory=dict)
    needs_answer: bool = False  # compares the step's code with its challenge's reference answer


MEASURES: dict[str, Measure] = {}


def measure(name: str, reads: type, label: str, detail: str, values: tuple[str, ...],
            params: Mapping[str, Param] | None = None, needs_answer: bool = False
            ) -> Callable[[Callable[..., Reading]], Callable[..., Reading]]:
    """Declares a measure: its name in a lesson, what it reads, its default words, its values."""
    def register(compute: Callable[..., Reading]) -> Callable[..., Reading]:
        MEASURES[name] = Measure(name, reads, label, detail, values, compute, params or {}, needs_answer)
        return compute
    return register


def placeholders(template: str) -> list[str]:
    """The names a template fills, in order. Raises ValueError on anything but plain ``{name}``
    (no format spec, no conversion, no attribute or index: a lesson's text reads no object)."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(later("{placeholder}: a placeholder is a plain name, such as {example}",
                                   placeholder=f"{{{name}}}", example="{nodes}"))
        names.append(name)
    return names


@dataclass(frozen=True)
class AnswerSpec:
    """A step's declared answer: the measure, its parameters, and the lesson's own words if any."""

    measure: str
    params: tuple[tuple[str, object], ...] = ()
    label: str | None = None
    detail: str | None = None

    def reveal(self, settings: object) -> Answer:
        """Run the measure now on ``settings`` and word its answer (Messages)."""
        declared = MEASURES[self.measure]
        reading = declared.compute(settings, **dict(self.params))
        detail = reading.said or worded(self.detail or declared.detail, reading.values)
        return Answer(worded(self.label or declared.label, reading.values), reading.value, detail)


def worded(template: str, values: Mapping[str, object]) -> Message:
    """A label or detail template as a Message: said in the reader's language (the lessons we
    ship are in the catalogs; a teacher's own words show as typed), filled from a reading's
    values; one a run could not give (it stopped) reads "?"."""
    return later(template, **{name: values.get(name, "?") for name in placeholders(template)})
