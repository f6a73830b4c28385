"""A class's answers as the teacher keeps them: one row per answer, summaries, and the CSV.

Each answer is stored as ``{"a": answer, "s": seconds to answer}`` under its seat
(``answer_record``). Rows name seats by their number in the class, never by the token,
and are marked against the live answers the teacher revealed. The CSV names a question by
its step's id and a choice by its id (the lesson file's keys), never by words in some
language: answers given in three languages count as one question.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from stockdemo.classroom.gallery import ChallengeRow
from stockdemo.classroom.store import Store, class_key
from stockdemo.config import STEP
from stockdemo.i18n import Message
from stockdemo.i18n.stored import from_data
from stockdemo.lessons import Question, Step


def answer_record(answer: str, seconds: float) -> str:
    """An answer as the store keeps it under its seat."""
    return json.dumps({"a": answer, "s": round(seconds, 2)})


def read_answer(text: str) -> tuple[str, float]:
    """A stored answer -> (answer, seconds to answer)."""
    try:
        record = json.loads(text)
        return str(record["a"]), float(record["s"])
    except (ValueError, KeyError, TypeError):
        return text, 0.0  # written by hand or by an older version: the bare answer


@dataclass(frozen=True)
class ResultRow:
    """One answer, as the teacher's CSV holds it. ``seat`` is a number, never the token."""

    question: int  # the step's number in the lesson
    seat: int
    answer: str  # as Question.parse gives it: a number, or a choice's msgid
    correct: bool | None  # None: not revealed yet
    seconds: float
    id: str = ""  # the step's stable id: the CSV's question
    answer_id: str = ""  # a choice's stable id: the CSV's answer ("" for a number: the answer itself)

    # A challenge's row (gallery.ChallengeRow) fills the same columns: "challenge N", the
    # seat, its final code, whether it passes, seconds to its first pass, and its runs.
    CSV_HEADER = ("question", "seat", "answer", "correct", "seconds_to_answer", "runs")

    def csv_row(self) -> tuple[object, ...]:
        correct = "" if self.correct is None else ("yes" if self.correct else "no")
        return (self.id or self.question, self.seat, self.answer_id or self.answer, correct,
                f"{self.seconds:.1f}", "")


@dataclass(frozen=True)
class QuestionSummary:
    """One question's results: how many answered, how many were right, how fast."""

    question: int
    answers: int
    live: Message | str | None  # the live answer revealed, if it was (said where shown)
    right: int | None  # None: not revealed yet
    median_s: float | None
    rule: str

    @property
    def share_right(self) -> float | None:
        return None if self.right is None or not self.answers else self.right / self.answers


def results_csv(rows: Iterable[ResultRow], challenges: Iterable[ChallengeRow] = ()) -> str:
    """The class's answers, then its challenges, as CSV text: question, seat, answer,
    correct, seconds to answer (a challenge: to its first pass), runs (a challenge's)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ResultRow.CSV_HEADER)
    writer.writerows(row.csv_row() for row in rows)
    writer.writerows(row.csv_row() for row in challenges)
    return out.getvalue()


def summarise(rows: Iterable[ResultRow], reveals: Mapping[int, str],
              questions: Mapping[int, Question]) -> list[QuestionSummary]:
    """Rows -> one summary per question that has answers, in lesson order (``questions``: the
    class's lesson's, by step number)."""
    by_question: dict[int, list[ResultRow]] = {}
    for row in rows:
        by_question.setdefault(row.question, []).append(row)
    out = []
    for step in sorted(by_question):
        mine = by_question[step]
        revealed = step in reveals
        out.append(QuestionSummary(
            question=step, answers=len(mine), live=reveals.get(step),
            right=sum(bool(r.correct) for r in mine) if revealed else None,
            median_s=statistics.median(r.seconds for r in mine),
            rule=questions[step].rule if step in questions else ""))
    return out


def live_value(live: dict) -> Message | str:
    """A revealed answer's value as stored: what a question marks answers against
    (``Question.correct`` reads a Message as its English)."""
    return from_data(live.get("value", ""))


def read_results(db: Store, code: str, lesson: Sequence[Step]
                 ) -> tuple[list[ResultRow], dict[int, str]]:
    """Every answer of class ``code`` to its ``lesson``'s steps' questions, marked against the
    live answers revealed, in one round trip -> (rows by question and seat, {step number:
    live answer value})."""
    main = class_key(code)
    steps = range(STEP.low, STEP.high + 1)
    pipe = db.pipeline(transaction=False)
    pipe.hgetall(f"{main}:seats")
    pipe.hgetall(f"{main}:reveals")
    for step in steps:
        pipe.hgetall(f"{main}:answers:{step}")
    seats, reveals, *answers = pipe.execute()
    live = {int(step): live_value(json.loads(text)) for step, text in reveals.items()}
    rows = []
    for step, given in zip(steps, answers, strict=True):
        if step > len(lesson):  # a step number the lesson does not have: nobody answered it
            continue
        question = lesson[step - 1].ask
        right = question.correct(live[step]) if step in live else None
        for seat, record in given.items():
            value, seconds = read_answer(record)
            rows.append(ResultRow(step, int(seats.get(seat) or 0), value,
                                  question.is_right(value, right) if step in live else None,
                                  seconds, lesson[step - 1].id, question.choice_id(value) or ""))
    rows.sort(key=lambda r: (r.question, r.seat))
    return rows, live
