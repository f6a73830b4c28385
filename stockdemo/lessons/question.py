"""A lesson step's question as a class answers it: what an answer may be, and when it is right.

A student's answer is untrusted: ``Question.parse`` checks it (a whole number within
bounds, or one of the choices) and never raises. Whether it is right is decided
against the live answer the teacher revealed, never against a stored key. A choice has a
stable id beside its words (``choice_ids``): results keep the id, whatever the language.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from stockdemo.i18n import Message, tr

MAX_ANSWER_LEN = 32


@dataclass(frozen=True)
class Question:
    """How a lesson question is answered: a whole number within bounds, or one of the choices.

    ``tolerance``: how far a number may be from the live answer and still count as right.
    """

    kind: str  # "number" or "choice"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    tolerance: int = 0
    choice_ids: tuple[str, ...] = ()  # one per choice, in order: the lesson file's keys

    def choice_id(self, choice: str) -> str | None:
        """The stable id of a choice (as ``parse`` gives it), or None."""
        return dict(zip(self.choices, self.choice_ids, strict=False)).get(choice)

    def parse(self, raw: object) -> tuple[str | None, str | None]:
        """Untrusted answer -> (canonical text or None, message or None), the message in the
        language spoken now (the student's, in their own run). Never raises."""
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            return None, tr("An answer is a number or one of the choices.")
        text = str(raw).strip()
        if not text:
            return None, tr("The answer is empty.")
        if len(text) > MAX_ANSWER_LEN:
            return None, tr("That answer is too long.")
        if self.kind == "choice":
            if text in self.choices:
                return text, None
            return None, tr("Pick one of: {choices}.", choices=", ".join(tr(c) for c in self.choices))
        try:
            number = float(text)
        except ValueError:
            return None, tr("{answer} is not a number.", answer=repr(text))
        if not math.isfinite(number) or number != round(number):
            return None, tr("{answer} is not a whole number.", answer=repr(text))
        if not self.low <= number <= self.high:
            return None, tr("Answer with a whole number from {low} to {high}.", low=self.low, high=self.high)
        return str(int(number)), None

    def correct(self, live_value: str | Message) -> str | None:
        """The answer (as ``parse`` gives it) that a live answer's value stands for, if any.

        "+4" -> "4"; "1,234× smaller" -> "smaller"; "No: the baseline wins" -> "No". A Message is
        read as its English: the choices' ids are the lesson's own words, whatever is spoken.
        """
        if isinstance(live_value, Message):
            live_value = live_value.english()
        if self.kind == "number":
            found = re.search(r"[+-]?\d[\d,]*", live_value)
            return None if found is None else self.parse(found.group().replace(",", ""))[0]
        text = live_value.strip().lower()
        for choice in self.choices:
            if text.startswith(choice.lower()) or choice.lower() in text.split():
                return choice
        return None

    def is_right(self, answer: str, right: str | None) -> bool | None:
        """Whether an answer counts as right against the live one; None if there is none yet.

        Exact for a choice; within ``tolerance`` for a number.
        """
        if right is None:
            return None
        if self.kind == "choice":
            return answer == right
        try:
            return abs(int(answer) - int(right)) <= self.tolerance
        except ValueError:
            return False

    @property
    def rule(self) -> str:
        """How answers are marked, in words for the teacher's screen (the language spoken now)."""
        if self.kind == "choice":
            return tr("the choice the live run gives")
        if not self.tolerance:
            return tr("exactly the live run's number")
        return tr("within ±{tolerance} of the live run's number", tolerance=self.tolerance)

